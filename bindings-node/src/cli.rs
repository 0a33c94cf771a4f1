//! The `mcplens` command of the npm package: `bin/mcplens.cjs` calls `cliMain`, the same command
//! line as the `mcplens` binary (`mcplens_cli::run`).

use napi_derive::napi;

/// Runs the `mcplens` command line with `argv` (the program name first) and returns its exit
/// code. It blocks the calling thread until the command ends.
#[napi]
pub fn cli_main(argv: Vec<String>) -> u32 {
    u32::from(mcplens_cli::run(argv))
}
