//! The floor of `make bench-proxy`: one more process between a host and a stdio server, doing
//! nothing but relaying lines (no parsing, no tracking, no tools): `bare-relay -- <server command>`.
//! Each direction is a blocking thread that writes a line on as soon as it has read it.

use std::io::{self, BufRead, BufReader, Write};
use std::process::{Command, Stdio};

/// Copies lines from `from` to `to`, flushing each, until either side ends.
fn relay(from: impl io::Read, mut to: impl Write) {
    let mut from = BufReader::new(from);
    let mut line = Vec::new();
    while from.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        if to.write_all(&line).and_then(|()| to.flush()).is_err() {
            return;
        }
        line.clear();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip_while(|a| a != "--").skip(1).collect();
    let (program, rest) = args.split_first().expect("usage: bare-relay -- <server command>");
    let mut child =
        Command::new(program).args(rest).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("the server");
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    std::thread::spawn(move || relay(io::stdin().lock(), stdin));
    relay(stdout, io::stdout().lock());
    let _ = child.kill();
    let _ = child.wait();
}
