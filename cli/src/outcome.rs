//! How a command ends: its exit codes, why it stopped ([`Stop`]), and one traversal's outcome
//! ([`Traversal`]) — what the commands' modules share, below the crate root.

use std::time::Duration;

use mcplens::discovery::{DiscoveryError, ListKind, Listing};

use crate::connect::ConnectError;

/// Exit codes (also in `mcplens --help` and cli/README.md).
pub mod exit {
    /// Success; `check` found nothing clients would drop or refuse.
    pub const OK: u8 = 0;
    /// A traversal failed, the listing tool failed, or `check` found problems.
    pub const FAILED: u8 = 1;
    /// Usage error: bad flags or arguments.
    pub const USAGE: u8 = 2;
    /// Could not connect: the server did not start, could not be reached, or did not complete
    /// the handshake (`server/discover` or `initialize`) in time.
    pub const CONNECT: u8 = 3;
}

/// Why a command stopped: printed as `error: <code>: <message>` with its exit code.
pub struct Stop {
    pub code: &'static str,
    pub message: String,
    pub exit: u8,
}

impl Stop {
    pub fn usage(message: impl Into<String>) -> Stop {
        Stop { code: "invalid_argument", message: message.into(), exit: exit::USAGE }
    }
}

impl From<ConnectError> for Stop {
    fn from(e: ConnectError) -> Stop {
        let mut message = e.message;
        if !e.stderr_tail.is_empty() {
            message.push_str("; the server's last stderr lines (sanitized):");
            for line in &e.stderr_tail {
                message.push_str("\n  | ");
                message.push_str(line);
            }
        }
        let exit = if e.code == "invalid_argument" { exit::USAGE } else { exit::CONNECT };
        Stop { code: e.code.as_str(), message, exit }
    }
}

impl From<DiscoveryError> for Stop {
    fn from(e: DiscoveryError) -> Stop {
        let exit = if e.code() == "invalid_argument" { exit::USAGE } else { exit::FAILED };
        Stop { code: e.code().as_str(), message: e.to_string(), exit }
    }
}

/// One traversal's outcome.
pub struct Traversal {
    pub kind: ListKind,
    pub result: Result<Listing, DiscoveryError>,
    /// List requests sent (also known after a failure).
    pub requests: u32,
    pub elapsed: Duration,
}
