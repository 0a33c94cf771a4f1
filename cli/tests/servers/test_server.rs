//! A real rmcp stdio MCP server for the CLI's tests (`cargo test` builds it as the example
//! `test-server`; it is not part of the installed command).
//!
//! Flags (see `behaviour.rs`): `--templates N --resources N --page-size N --sloppy
//! --repeat-cursor --no-resources --templates-error CODE --delay-ms N`, and here:
//! `--crash` (write a hostile line to stderr and exit before the handshake), `--crash-noise N`
//! (the same after N lines of noise) and `--hang` (never answer anything).

#[path = "behaviour.rs"]
mod behaviour;

use behaviour::{Options, Raw, Typed};
use rmcp::ServiceExt;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    args.remove(0); // the program name
    let noise = args.iter().position(|a| a == "--crash-noise").map(|i| args[i + 1].parse::<usize>().unwrap());
    if args.iter().any(|a| a == "--crash") || noise.is_some() {
        for i in 0..noise.unwrap_or(0) {
            eprintln!("noise {i}: \u{1b}[2m{}\u{1b}[0m", "x".repeat(500));
        }
        eprintln!("starting up");
        eprintln!("\u{1b}[31mfatal:\u{1b}[0m config \u{202E}missing\u{200B} boom");
        std::process::exit(7);
    }
    if args.iter().any(|a| a == "--hang") {
        // Keep stdin open and say nothing.
        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        return;
    }
    args.retain(|a| a != "--crash" && a != "--hang");
    let options = match Options::parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("test-server: {e}");
            std::process::exit(2);
        }
    };
    let server = Raw(Typed(options));
    match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => {
            eprintln!("test-server: {e}");
            std::process::exit(1);
        }
    }
}
