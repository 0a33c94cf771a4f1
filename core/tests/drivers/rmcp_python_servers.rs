//! The rmcp catalog driver on protocol 2026-07-28 against real Python servers that do not
//! advertise `resources.listChanged` (and send `ttlMs: 0`), as most Python servers are: community
//! fastmcp 4 and an `mcp` 2.3 low-level `Server`. The watch stands without a
//! `subscriptions/listen` stream (`not_offered`), a refresh commits with status `ok`, and the
//! connection's end clears the pair.
//!
//! The servers run from the virtualenvs `make` builds (`.build/venv-fastmcp4`,
//! `.build/venv-mcp2`); `make test-rust` sets `MCPLENS_REQUIRE_PYTHON_SERVERS=1`, so there a missing
//! virtualenv fails the test. A bare `cargo test` without them prints why it checks nothing.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcplens::catalog::{Notifications, RefreshConfig, Status};
use mcplens::discovery::Limits;
use mcplens::rmcp::{CatalogDriver, DriverEvent, RefreshOutcome};
use rmcp::model::ProtocolVersion;
use rmcp::service::serve_client_with_lifecycle;
use rmcp::transport::TokioChildProcess;
use rmcp::ClientLifecycleMode;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_owned()
}

/// The virtualenv's python, or `None` (with the reason printed) when it is not built and
/// `MCPLENS_REQUIRE_PYTHON_SERVERS` is not set.
fn python(venv: &str) -> Option<PathBuf> {
    let python = repo().join(".build").join(venv).join("bin").join("python");
    if python.exists() {
        return Some(python);
    }
    let required = std::env::var_os("MCPLENS_REQUIRE_PYTHON_SERVERS").is_some();
    assert!(!required, "{} is missing: run make test-rust", python.display());
    // The reason, on a line of its own; `make test-rust` runs this test with the servers.
    eprintln!("not checked: {} is missing (make test-rust builds it)", python.display());
    None
}

async fn watch_without_list_changed(venv: &str, args: &[&str], templates: usize) {
    let Some(python) = python(venv) else { return };
    let mut command = tokio::process::Command::new(python);
    command.args(
        args.iter()
            .map(|a| a.replace("{servers}", &repo().join("bindings-python/tests/servers").display().to_string())),
    );
    let (transport, _) = TokioChildProcess::builder(command).stderr(Stdio::null()).spawn().expect("the server starts");
    let config = RefreshConfig { retry_base: Duration::from_secs(3600), ..RefreshConfig::default() };
    let driver = CatalogDriver::with_config(Limits::default(), config);
    let mut events = driver.subscribe();
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let running = serve_client_with_lifecycle(driver.client_handler("py"), transport, mode).await.expect("connects");
    let info = running.peer().peer_info().expect("initialized").clone();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let caps = serde_json::to_value(&info.capabilities).unwrap();
    assert_ne!(caps.pointer("/resources/listChanged"), Some(&serde_json::json!(true)), "{caps}");
    let conn = driver.attach(running);
    let watching = loop {
        let event = events.recv().await.expect("driver events");
        if matches!(event, DriverEvent::Watching { .. } | DriverEvent::ListenFailed { .. }) {
            break event;
        }
    };
    assert_eq!(watching, DriverEvent::Watching { server: "py".to_owned(), notifications: Notifications::NotOffered });
    assert_eq!(driver.refresh("py").await, Ok(RefreshOutcome::Committed));
    let status = driver.status("py").unwrap();
    assert_eq!((status.status, status.templates, status.last_error), (Status::Ok, templates, None));
    conn.close();
    conn.closed().await;
    assert_eq!(driver.status("py").unwrap().status, Status::Unknown);
}

#[tokio::test]
async fn fastmcp_4_on_2026_07_28_without_list_changed() {
    watch_without_list_changed("venv-fastmcp4", &["{servers}/fastmcp_server.py", "stdio"], 5).await;
}

#[tokio::test]
async fn mcp_2_3_low_level_server_on_2026_07_28_without_list_changed() {
    watch_without_list_changed("venv-mcp2", &["{servers}/sdk_server.py", "paged"], 8).await;
}

/// The completion tool over the rmcp driver, against the `mcp` 2.3 high-level server's own
/// `@server.completion()` (`complete_server.py`): the listing names the server under `completion`,
/// a variable is completed with the other as context, and the filled URI is read.
#[tokio::test]
async fn the_completion_tool_over_rmcp_against_mcp_2_3() {
    let Some(python) = python("venv-mcp2") else { return };
    let mut command = tokio::process::Command::new(python);
    command.arg(repo().join("bindings-python/tests/servers/complete_server.py"));
    let (transport, _) = TokioChildProcess::builder(command).stderr(Stdio::null()).spawn().expect("the server starts");
    let driver = CatalogDriver::with_config(Limits::default(), RefreshConfig::default());
    let mode = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let running = serve_client_with_lifecycle(driver.client_handler("notes"), transport, mode).await.expect("connects");
    let conn = driver.attach(running);
    let listing: serde_json::Value = serde_json::from_str(&driver.call_tool("{}").await.unwrap()).unwrap();
    assert_eq!(listing["completion"], serde_json::json!(["notes"]));
    let config = mcplens::tool::CallConfig::default();
    let name = mcplens::tool::complete::NAME;
    let input = r#"{"server":"notes","uriTemplate":"notes://{folder}/{name}","variable":"name","value":"","arguments":{"folder":"home"}}"#;
    let out: serde_json::Value =
        serde_json::from_str(&driver.call_server_tool(name, input, &config).await.unwrap()).unwrap();
    assert_eq!(out["values"], serde_json::json!(["garden"]));
    let read = r#"{"server":"notes","uri":"notes://home/garden"}"#;
    let text = driver.call_server_tool(mcplens::tool::read::NAME, read, &config).await.unwrap();
    assert!(text.ends_with("---\nhome/garden"), "{text}");
    conn.close();
    conn.closed().await;
}
