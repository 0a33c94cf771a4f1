//! The real `mcplens` binary against real MCP servers:
//!
//! - the rmcp stdio test server (`tests/servers/test_server.rs`, built by `cargo test` as the
//!   example `test-server`) with flags choosing pagination, planted problems, a repeating
//!   cursor, no resources capability, JSON-RPC errors, slow pages, a crash or a hang;
//! - the same behaviour served over streamable HTTP in process (rmcp's
//!   `transport-streamable-http-server` on hyper), for `--url`;
//! - `@modelcontextprotocol/server-everything` when it is installed under `node_modules/`.

#[path = "servers/behaviour.rs"]
mod behaviour;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use behaviour::{Options, Typed};
use mcplens::catalog::{Action, RefreshConfig, Refresher, Want};
use mcplens::discovery::{Limits, ListKind, Outcome, Pager};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

fn mcplens_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcplens")
}

/// The stdio test server: `cargo test` builds examples next to the binaries.
fn test_server() -> String {
    let bin = Path::new(mcplens_bin());
    let path = bin
        .parent()
        .expect("the binary's directory")
        .join("examples")
        .join(format!("test-server{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo test -p mcplens-cli` (it builds the examples) or \
         `cargo build -p mcplens-cli --example test-server` first",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }

    /// Nothing the hostile servers planted reaches the output unsanitized.
    fn assert_clean(&self) {
        for text in [&self.stdout, &self.stderr] {
            for bad in ['\u{1b}', '\u{202E}', '\u{200B}'] {
                assert!(!text.contains(bad), "{bad:?} leaked into the output:\n{text}");
            }
        }
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}\n--- stdout\n{}--- stderr\n{}", self.code, self.stdout, self.stderr)
    }
}

/// Runs `mcplens <args> -- test-server <server_args>`.
fn run(args: &[&str], server_args: &[&str]) -> Run {
    let mut cmd = Command::new(mcplens_bin());
    cmd.args(args).arg("--").arg(test_server()).args(server_args);
    cmd.env("COLUMNS", "100");
    Run::from(cmd.output().expect("mcplens runs"))
}

/// Runs `mcplens <args>` as given.
fn run_raw(args: &[&str]) -> Run {
    let mut cmd = Command::new(mcplens_bin());
    cmd.args(args).env("COLUMNS", "100");
    Run::from(cmd.output().expect("mcplens runs"))
}

fn findings(report: &Value) -> Vec<(String, String, Option<u64>)> {
    report["lists"]
        .as_array()
        .expect("lists")
        .iter()
        .flat_map(|l| l["findings"].as_array().expect("findings").iter())
        .map(|f| {
            (f["severity"].as_str().unwrap().to_owned(), f["code"].as_str().unwrap().to_owned(), f["count"].as_u64())
        })
        .collect()
}

/// What the core's tool renders for `options`' templates, fed page by page to a `Pager` in
/// memory (no rmcp in between).
fn core_tool_output(options: &Options, server: &str, input: &str) -> String {
    let list = |kind: ListKind| {
        let mut pager = Pager::new(kind, server, true, Limits::default(), Duration::ZERO).unwrap();
        while let Some(request) = pager.poll_request() {
            let page = options.page(kind.list_key(), request.cursor.as_deref()).to_string();
            pager.handle_outcome(Outcome::Page(&page), Duration::ZERO).unwrap();
        }
        pager.finish().unwrap()
    };
    let mut machine = Refresher::new(RefreshConfig::default(), 0);
    machine.attach(server, true);
    machine.request(server, Want::Refresh, Duration::ZERO).unwrap();
    let Some(Action::Traverse { traversal, .. }) = machine.poll_action() else { panic!("no traversal") };
    let (resources, templates) = (list(ListKind::Resources), list(ListKind::ResourceTemplates));
    machine.handle_traversed(traversal, Ok((&resources, &templates)), Duration::ZERO);
    mcplens::tool::call(machine.catalog(), input).unwrap()
}

fn options(args: &[&str]) -> Options {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    Options::parse(&args).unwrap()
}

// ---------------------------------------------------------------------------------------------
// templates / resources
// ---------------------------------------------------------------------------------------------

#[test]
fn templates_table_lists_every_page() {
    let r = run(&["templates", "--server", "docs"], &["--templates", "5", "--page-size", "2"]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{r:?}");
    assert!(lines[0].starts_with("SERVER") && lines[0].contains("URI TEMPLATE") && lines[0].contains("DESCRIPTION"));
    for (i, line) in lines[1..].iter().enumerate() {
        assert!(line.starts_with("docs "), "{line}");
        assert!(line.contains(&format!("mem://t{i}/{{id}}")), "{line}");
        assert!(line.contains("application/json"), "{line}");
        // The description's newline is shown as a space.
        assert!(line.contains(&format!("Template number {i}. Second line.")), "{line}");
    }
    assert!(r.stderr.contains("5 resource templates from server \"docs\" (3 pages"), "{r:?}");
}

#[test]
fn table_is_cut_to_the_width() {
    let mut cmd = Command::new(mcplens_bin());
    cmd.args(["templates", "--", &test_server(), "--templates", "2"]).env("COLUMNS", "70");
    let r = Run::from(cmd.output().unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    let mut lines = r.stdout.lines();
    lines.next(); // the header
    for line in lines {
        assert_eq!(line.chars().count(), 70, "{line:?}");
        assert!(line.ends_with('…'), "{line:?}");
    }
    // URI templates are never cut.
    assert!(r.stdout.contains("mem://t1/{id}"));
}

#[test]
fn default_server_name_is_the_servers_own_then_the_command_or_script() {
    // The server's serverInfo.name, sanitized (the bidi override goes).
    let r = run(&["templates"], &["--name", "docs\u{202e}-server"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.lines().nth(1).unwrap().starts_with("docs-server "), "{r:?}");
    // `--server` wins over it.
    let r = run(&["templates", "--server", "mine"], &["--name", "docs"]);
    assert!(r.stdout.lines().nth(1).unwrap().starts_with("mine "), "{r:?}");
    // A blank name: the command's file name.
    let r = run(&["templates"], &["--name", " \u{200b}"]);
    assert!(r.stdout.lines().nth(1).unwrap().starts_with("test-server "), "{r:?}");
    // Before the server names itself (it never starts here), a runner's script names it.
    for (command, name) in [
        (&["python3", "/nonexistent/notes_server.py"][..], "notes_server"),
        (&["python3", "-m", "no_such_mcp_module"][..], "no_such_mcp_module"),
        (&["node", "--no-warnings", "/nonexistent/srv.mjs"][..], "srv"),
    ] {
        let r = run_raw(&[&["templates", "--connect-timeout-ms", "5000", "--"][..], command].concat());
        assert_eq!(r.code, 3, "{command:?}: {r:?}");
        assert!(r.stderr.contains(&format!("server \"{name}\"")), "{command:?}: {r:?}");
    }
}

#[test]
fn templates_json_is_the_tool_output() {
    for server_args in [&["--templates", "4", "--page-size", "3"][..], &["--sloppy", "--page-size", "2"][..]] {
        let r = run(&["templates", "--json", "--server", "docs"], server_args);
        assert_eq!(r.code, 0, "{r:?}");
        r.assert_clean();
        let out = r.json();
        let keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["failures", "resourceTemplates", "total"]);
        assert_eq!(out["failures"], serde_json::json!([]));
        for t in out["resourceTemplates"].as_array().unwrap() {
            assert_eq!(t["server"], "docs");
            assert!(t["uriTemplate"].is_string() && t["name"].is_string());
            for key in t.as_object().unwrap().keys() {
                let allowed = ["uriTemplate", "name", "title", "description", "mimeType", "annotations", "server"];
                assert!(allowed.contains(&key.as_str()), "unexpected key {key}");
            }
        }
        // Byte for byte what the core's tool renders from the same pages.
        assert_eq!(r.stdout.trim_end(), core_tool_output(&options(server_args), "docs", "{}"));
    }
}

#[test]
fn templates_json_pages_with_offset_and_limit() {
    let r = run(&["templates", "--json", "--offset", "1", "--limit", "2"], &["--templates", "5"]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    assert_eq!(out["total"], 5);
    assert_eq!(out["nextOffset"], 3);
    let names: Vec<&str> =
        out["resourceTemplates"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["t1", "t2"]);
    assert_eq!(
        r.stdout.trim_end(),
        core_tool_output(&options(&["--templates", "5"]), "test-server", r#"{"offset":1,"limit":2}"#)
    );
}

#[test]
fn templates_json_reports_a_failed_traversal_in_failures() {
    let r = run(&["templates", "--json", "--max-pages", "1"], &["--templates", "4", "--page-size", "2"]);
    assert_eq!(r.code, 1, "{r:?}");
    let out = r.json();
    assert_eq!(out["resourceTemplates"], serde_json::json!([]));
    assert_eq!(out["failures"][0]["server"], "test-server");
    assert_eq!(out["failures"][0]["code"], "page_limit");
    assert!(r.stderr.starts_with("error: page_limit: server \"test-server\""), "{r:?}");
}

#[test]
fn resources_table_and_json() {
    let r = run(&["resources"], &["--resources", "3", "--page-size", "2"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.lines().next().unwrap().contains("URI"));
    assert_eq!(r.stdout.lines().count(), 4, "{r:?}");
    assert!(r.stdout.contains("mem://r2") && r.stdout.contains("Resource number 2"));

    let r = run(&["resources", "--json"], &["--resources", "3", "--page-size", "2"]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    assert_eq!(out["kind"], "resources");
    assert_eq!(out["support"], "listed");
    assert_eq!(out["items"].as_array().unwrap().len(), 3);
    assert_eq!(out["items"][0]["uri"], "mem://r0");
    assert_eq!(out["diagnostics"]["pages"], 2);
}

#[test]
fn sanitized_strings_are_shown_sanitized() {
    let r = run(&["templates"], &["--sloppy"]);
    assert_eq!(r.code, 0, "{r:?}");
    r.assert_clean();
    assert!(r.stdout.contains("evilfdp.exe") && r.stdout.contains("red alert"), "{r:?}");
    // The invalid template is dropped, the sloppy one kept without its bad fields.
    assert!(!r.stdout.contains("bad/{unclosed"));
    assert!(r.stdout.contains("sloppy://{id}"));
    assert!(r.stderr.contains("run `mcplens check` for details"), "{r:?}");
}

#[test]
fn no_resources_capability_lists_nothing() {
    let r = run(&["templates"], &["--no-resources"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("does not declare the resources capability"), "{r:?}");
}

#[test]
fn legacy_method_not_found_means_no_templates() {
    let r = run(&["templates"], &["--templates-error", "-32601"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("-32601 (method not found)"), "{r:?}");
}

// ---------------------------------------------------------------------------------------------
// Errors and exit codes
// ---------------------------------------------------------------------------------------------

#[test]
fn server_errors_keep_the_code_not_the_message() {
    let r = run(&["templates"], &["--templates-error", "-32603"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.stderr.trim_end(),
        "error: server_error: server \"test-server\": resources/templates/list failed with JSON-RPC error -32603"
    );
    assert!(!r.stderr.contains("broken today"));
}

#[test]
fn bounds_fail_with_their_codes() {
    let cases: [(&[&str], &[&str], &str); 5] = [
        (&["--max-pages", "2"], &["--templates", "6", "--page-size", "2"], "page_limit"),
        (&["--max-items", "2"], &["--templates", "3"], "item_limit"),
        (&["--max-bytes", "100"], &["--templates", "3"], "byte_limit"),
        (&["--deadline-ms", "300"], &["--delay-ms", "2000"], "deadline"),
        (&["--repeated-cursors", "fail"], &["--repeat-cursor"], "repeated_cursor"),
    ];
    for (flags, server_args, code) in cases {
        let command = if code == "repeated_cursor" { "resources" } else { "templates" };
        let args: Vec<&str> = std::iter::once(command).chain(flags.iter().copied()).collect();
        let r = run(&args, server_args);
        assert_eq!(r.code, 1, "{code}: {r:?}");
        assert!(r.stderr.starts_with(&format!("error: {code}: server \"test-server\"")), "{code}: {r:?}");
        assert_eq!(r.stdout, "", "{code}: nothing listed on failure");
    }
}

#[test]
fn usage_errors_exit_2() {
    let server = test_server();
    let cases: Vec<Vec<&str>> = vec![
        vec!["templates"],                                                   // no endpoint
        vec!["templates", "--url", "http://127.0.0.1:9/mcp", "--", &server], // both
        vec!["templates", "--max-pages", "0", "--", &server],
        vec!["templates", "--deadline-ms", "0", "--", &server],
        vec!["templates", "--url", "ftp://example.com/mcp"],
        vec!["templates", "--url", "not a url"],
        vec!["templates", "--json", "--limit", "5000", "--", &server],
        vec!["templates", "--offset", "1", "--", &server], // --offset needs --json
        vec!["check", "--max-items", "many", "--", &server],
        vec!["nonsense"],
    ];
    for args in cases {
        let r = run_raw(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert_eq!(r.stdout, "", "{args:?}");
    }
    let r = run_raw(&["templates", "--max-pages", "0", "--", &server]);
    assert_eq!(r.stderr.trim_end(), "error: invalid_argument: max_pages must be at least 1");
}

#[test]
fn connect_failures_exit_3() {
    // The program does not exist.
    let r = run_raw(&["templates", "--", "/nonexistent/mcp-server"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.starts_with("error: transport_error: could not start \"/nonexistent/mcp-server\""), "{r:?}");

    // The server dies before the handshake: its stderr is shown, sanitized.
    let r = run(&["templates"], &["--crash"]);
    assert_eq!(r.code, 3, "{r:?}");
    r.assert_clean();
    assert!(
        r.stderr.starts_with(
            "error: transport_error: server \"test-server\" closed the connection during the handshake; \
             the server's last stderr lines (sanitized):\n"
        ),
        "{r:?}"
    );
    assert!(r.stderr.contains("| fatal: config missing boom"), "{r:?}");

    // The server never answers initialize.
    let r = run(&["check", "--connect-timeout-ms", "500"], &["--hang"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(
        r.stderr.starts_with("error: deadline: server \"test-server\" did not complete the handshake within 500 ms"),
        "{r:?}"
    );

    // Nothing listens on the URL.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let r = run_raw(&["templates", "--connect-timeout-ms", "5000", "--url", &url]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.starts_with("error: transport_error: "), "{r:?}");
}

/// With `--json`, a connection failure still prints one JSON document on stdout — `templates`:
/// the tool's output with the failure under `failures`; `resources` and `check`: their shapes
/// with `error {code, message}` — and exits 3.
#[test]
fn connect_failures_print_json_with_json() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let server = test_server();
    let endpoints: [(&[&str], &str, &str); 4] = [
        (&["--", "/nonexistent/mcp-server"], "transport_error", "could not start \"/nonexistent/mcp-server\""),
        (&["--connect-timeout-ms", "300", "--", &server, "--hang"], "deadline", "did not complete the handshake"),
        (&["--", &server, "--crash"], "transport_error", "closed the connection during the handshake"),
        (&["--url", &url], "transport_error", "failed during the handshake"),
    ];
    for (endpoint, code, message) in endpoints {
        let name = ["--server", "docs"];
        fn args<'a>(command: &'a str, name: [&'a str; 2], endpoint: &[&'a str]) -> Vec<&'a str> {
            [command, "--json"].into_iter().chain(name).chain(endpoint.iter().copied()).collect()
        }

        let r = run_raw(&args("templates", name, endpoint));
        assert_eq!(r.code, 3, "{endpoint:?}: {r:?}");
        let out = r.json();
        assert_eq!(out["resourceTemplates"], serde_json::json!([]), "{r:?}");
        assert_eq!(out["total"], 0, "{r:?}");
        assert_eq!(out["failures"][0]["server"], "docs", "{r:?}");
        assert_eq!(out["failures"][0]["code"], code, "{r:?}");
        assert!(out["failures"][0]["message"].as_str().unwrap().contains(message), "{r:?}");
        assert!(r.stderr.starts_with(&format!("error: {code}: ")), "{r:?}");

        let r = run_raw(&args("resources", name, endpoint));
        assert_eq!(r.code, 3, "{endpoint:?}: {r:?}");
        let out = r.json();
        assert_eq!(out["kind"], "resources", "{r:?}");
        assert_eq!(out["server"], "docs", "{r:?}");
        assert_eq!(out["items"], serde_json::json!([]), "{r:?}");
        assert_eq!(out["error"]["code"], code, "{r:?}");
        assert!(out["error"]["message"].as_str().unwrap().contains(message), "{r:?}");

        let r = run_raw(&args("check", name, endpoint));
        assert_eq!(r.code, 3, "{endpoint:?}: {r:?}");
        let out = r.json();
        assert_eq!(out["server"], "docs", "{r:?}");
        assert_eq!(out["ok"], false, "{r:?}");
        assert_eq!(out["lists"], serde_json::json!([]), "{r:?}");
        assert_eq!(out["error"]["code"], code, "{r:?}");
        assert!(out["error"]["message"].as_str().unwrap().contains(message), "{r:?}");
    }

    // The crashed server's stderr tail is in the error, sanitized.
    let r = run(&["check", "--json"], &["--crash"]);
    assert_eq!(r.code, 3, "{r:?}");
    r.assert_clean();
    assert_eq!(r.json()["error"]["stderrTail"], serde_json::json!(["starting up", "fatal: config missing boom"]));

    // A failed traversal prints the listing's shape too (exit 1).
    let r = run(&["resources", "--json", "--protocol-version", "2025-11-25"], &["--repeat-cursor"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.json()["error"]["code"], "repeated_cursor", "{r:?}");
}

/// The stderr tail reaches back far enough to show why a Node server did not start (its cause
/// sits above a dozen stack frames), and stays capped and sanitized for a noisy one.
#[test]
fn stderr_tail_shows_the_cause_capped_and_sanitized() {
    let r = run_raw(&["templates", "--", "node", "/nonexistent/mcp-server.js"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("| Error: Cannot find module '/nonexistent/mcp-server.js'"), "{r:?}");

    let r = run(&["check"], &["--crash-noise", "5000"]);
    assert_eq!(r.code, 3, "{r:?}");
    r.assert_clean();
    let tail: Vec<&str> = r.stderr.lines().filter_map(|l| l.strip_prefix("  | ")).collect();
    assert!(tail.len() <= 40, "{} lines", tail.len());
    assert!(tail.iter().map(|l| l.chars().count()).sum::<usize>() <= 4_000 + "(earlier lines not shown)".len());
    assert_eq!(tail[0], "(earlier lines not shown)");
    assert_eq!(tail[tail.len() - 2..], ["starting up", "fatal: config missing boom"]);
    assert!(tail[1..tail.len() - 2].iter().all(|l| l.starts_with("noise ") && l.chars().count() <= 300), "{tail:?}");
}

#[test]
fn protocol_version_must_be_known() {
    let r = run(&["templates", "--protocol-version", "2099-01-01"], &[]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.starts_with("error: invalid_argument: --protocol-version must be auto or one of 2024-11-05"),
        "{r:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------------

#[test]
fn check_finds_every_planted_problem() {
    let r = run(&["check", "--server", "sloppy"], &["--sloppy", "--page-size", "2"]);
    assert_eq!(r.code, 1, "{r:?}");
    r.assert_clean();
    for expected in [
        "resources/templates/list: ok — 5 templates kept, 3 pages, 3 requests",
        "error    invalid_uri_template ×1",
        "error    dropped_field ×1          mimeType: invalid value dropped from 1 template",
        "error    dropped_field ×1          annotations.audience",
        "error    dropped_field ×1          annotations.priority",
        "warning  sanitized_strings ×2",
        "info     ignored_keys ×2",
        "resources/list: ok — 3 resources kept",
        "error    invalid_uri ×1",
        "error    dropped_field ×1          size: invalid value dropped from 1 resource",
        "clients will drop or refuse part of what this server lists",
    ] {
        assert!(r.stdout.contains(expected), "missing {expected:?}:\n{r:?}");
    }
    // Counts only: no name, URI or description the server sent.
    for planted in ["fdp", "unclosed", "with space", "red alert", "sloppy://"] {
        assert!(!r.stdout.contains(planted), "{planted} echoed:\n{r:?}");
    }

    let r = run(&["check", "--json"], &["--sloppy", "--page-size", "2"]);
    assert_eq!(r.code, 1, "{r:?}");
    let report = r.json();
    assert_eq!(report["ok"], false);
    let found = findings(&report);
    for (severity, code, count) in [
        ("error", "invalid_uri_template", Some(1)),
        ("error", "dropped_field", Some(1)),
        ("warning", "sanitized_strings", Some(2)),
        ("info", "ignored_keys", Some(2)),
        ("error", "invalid_uri", Some(1)),
    ] {
        assert!(
            found.contains(&(severity.to_owned(), code.to_owned(), count)),
            "missing {severity} {code} {count:?} in {found:?}"
        );
    }
    assert_eq!(report["lists"][0]["diagnostics"]["droppedFields"]["mimeType"], 1);
    assert_eq!(report["lists"][1]["diagnostics"]["droppedFields"]["size"], 1);
}

#[test]
fn check_reports_a_repeated_cursor() {
    // 2025-11-25: the first repeat fails the list.
    let r = run(&["check", "--protocol-version", "2025-11-25"], &["--repeat-cursor"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("(protocol 2025-11-25)"), "{r:?}");
    assert!(r.stdout.contains("resources/templates/list: ok"), "{r:?}");
    assert!(r.stdout.contains("resources/list: FAILED after 2 requests"), "{r:?}");
    assert!(r.stdout.contains("error    repeated_cursor"), "{r:?}");
    assert!(!r.stdout.contains("same again"), "cursors are never shown");
    // 2026-07-28 (negotiated by default): the repeat is followed and the page bound ends it.
    let r = run(&["check", "--max-pages", "4"], &["--repeat-cursor"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("(protocol 2026-07-28)"), "{r:?}");
    assert!(r.stdout.contains("resources/list: FAILED after 4 requests"), "{r:?}");
    assert!(r.stdout.contains("error    page_limit"), "{r:?}");
    assert!(!r.stdout.contains("same again"), "cursors are never shown");
}

#[test]
fn check_reports_every_error_code() {
    for (flags, server_args, code) in [
        (&["--max-pages", "2"][..], &["--templates", "6", "--page-size", "2"][..], "page_limit"),
        (&["--max-items", "2"][..], &["--templates", "3"][..], "item_limit"),
        (&["--max-bytes", "100"][..], &["--templates", "3"][..], "byte_limit"),
        (&["--deadline-ms", "300"][..], &["--delay-ms", "1000"][..], "deadline"),
        (&[][..], &["--templates-error", "-32000"][..], "server_error"),
    ] {
        let args: Vec<&str> = ["check", "--json"].into_iter().chain(flags.iter().copied()).collect();
        let r = run(&args, server_args);
        assert_eq!(r.code, 1, "{code}: {r:?}");
        let found = findings(&r.json());
        assert!(found.contains(&("error".to_owned(), code.to_owned(), None)), "{code}: {found:?}");
    }
}

#[test]
fn check_warns_near_the_bounds() {
    let r = run(&["check", "--max-pages", "4", "--max-items", "11"], &["--templates", "10", "--page-size", "3"]);
    assert_eq!(r.code, 0, "warnings alone pass: {r:?}");
    assert!(r.stdout.contains("warning  near_page_limit"), "{r:?}");
    assert!(r.stdout.contains("4 of 4 requests (100%, --max-pages)"), "{r:?}");
    assert!(r.stdout.contains("warning  near_item_limit"), "{r:?}");
    assert!(r.stdout.contains("10 of 11 items (90%, --max-items)"), "{r:?}");
    assert!(r.stdout.contains("nothing is dropped, but see the warnings"), "{r:?}");
}

#[test]
fn check_passes_a_clean_server() {
    let r = run(&["check"], &["--templates", "5", "--resources", "5", "--page-size", "2"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("resources/templates/list: ok — 5 templates kept, 3 pages, 3 requests"), "{r:?}");
    assert!(r.stdout.contains("resources/list: ok — 5 resources kept, 3 pages, 3 requests"), "{r:?}");
    assert!(r.stdout.ends_with("No problems: clients will list everything this server offers.\n"), "{r:?}");
    // One of each: the singular.
    let r = run(&["check"], &["--templates", "1", "--resources", "1"]);
    assert!(r.stdout.contains("resources/templates/list: ok — 1 template kept, 1 page, 1 request"), "{r:?}");
    assert!(r.stdout.contains("resources/list: ok — 1 resource kept, 1 page, 1 request"), "{r:?}");
}

#[test]
fn check_notes_a_server_without_resources() {
    let r = run(&["check"], &["--no-resources"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.matches("info     no_capability").count(), 2, "{r:?}");
}

// ---------------------------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------------------------

#[test]
fn progress_only_when_asked_or_on_a_terminal() {
    let slow = ["--templates", "4", "--page-size", "1", "--delay-ms", "150"];
    let r = run(&["templates", "--progress", "always"], &slow);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("test-server: resources/templates/list: "), "{r:?}");
    assert!(r.stderr.contains("requested, "), "{r:?}");
    assert!(r.stderr.contains("\r\u{1b}[2K"), "the line is erased: {r:?}");
    // stdout stays clean.
    assert!(!r.stdout.contains('\r'));

    // stderr is a pipe here: `auto` draws nothing.
    let r = run(&["templates"], &slow);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stderr.contains('\r') && !r.stderr.contains("requested"), "{r:?}");
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP (--url), in process
// ---------------------------------------------------------------------------------------------

/// Serves `options` over streamable HTTP on 127.0.0.1; returns the URL.
async fn serve_http(options: Options) -> String {
    serve_http_counting(options).await.0
}

/// Serves `options` over streamable HTTP on 127.0.0.1; returns the URL and the number of TCP
/// connections accepted so far.
async fn serve_http_counting(options: Options) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let served = serve(options, None).await;
    (format!("http://{}/mcp", served.addr), served.connections)
}

/// A self-signed certificate for `names`, made now: (DER, private key, PEM).
fn certificate(
    names: &[&str],
) -> (rustls::pki_types::CertificateDer<'static>, rustls::pki_types::PrivateKeyDer<'static>, String) {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let made = rcgen::generate_simple_self_signed(names).unwrap();
    let pem = made.cert.pem();
    (made.cert.der().clone(), made.signing_key.into(), pem)
}

/// Serves `options` over streamable HTTP with TLS on 127.0.0.1, with a self-signed certificate
/// for `names` made now; returns the URL, the TCP connection count and the certificate (PEM).
async fn serve_https(options: Options, names: &[&str]) -> (String, Arc<std::sync::atomic::AtomicUsize>, String) {
    let (der, key, pem) = certificate(names);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der], key)
        .unwrap();
    let served = serve(options, Some(tokio_rustls::TlsAcceptor::from(Arc::new(config)))).await;
    (format!("https://{}/mcp", served.addr), served.connections, pem)
}

/// A server started by [`serve`].
struct Served {
    addr: std::net::SocketAddr,
    /// TCP connections accepted so far.
    connections: Arc<std::sync::atomic::AtomicUsize>,
    /// What it did as a proxy: "CONNECT <authority>" or "<method> <absolute URI>", each followed
    /// by the `Proxy-Authorization` it came with, if any.
    proxied: Arc<std::sync::Mutex<Vec<String>>>,
}

/// Serves `options` over streamable HTTP (over TLS with `tls`) on 127.0.0.1 at `/mcp`, and
/// redirects: `/old` → 307 `/mcp`, `/moved` → 308 `/mcp`, `/loop` → 307 `/loop`, `/away` → 307
/// to the same server under another origin (`localhost`), `/found` → 302 `/mcp`. It is an HTTP
/// proxy too: `CONNECT` opens a tunnel to the authority asked for, and an absolute-form request
/// is answered as if it came straight (whatever its host).
async fn serve(options: Options, tls: Option<tokio_rustls::TlsAcceptor>) -> Served {
    use http_body_util::BodyExt;
    use hyper_util::rt::TokioIo;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let service = StreamableHttpService::new(
        move || Ok(Typed(options.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let away: Arc<str> = format!("{scheme}://localhost:{}/mcp", addr.port()).into();
    let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let accepted = connections.clone();
    let proxied = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = proxied.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // As asyncio, Node and most servers do; without it each response on a reused
            // connection waits for the client's delayed ACK.
            let _ = stream.set_nodelay(true);
            let (service, away, log) = (service.clone(), away.clone(), log.clone());
            let handler = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let (service, away, log) = (service.clone(), away.clone(), log.clone());
                async move {
                    let auth = request.headers().get("proxy-authorization").map(|v| v.to_str().unwrap().to_owned());
                    if request.method() == hyper::Method::CONNECT {
                        let authority = request.uri().authority().unwrap().to_string();
                        log.lock().unwrap().push(format!("CONNECT {authority} {auth:?}"));
                        tokio::spawn(async move {
                            let upgraded = hyper::upgrade::on(request).await.unwrap();
                            let mut target = tokio::net::TcpStream::connect(authority).await.unwrap();
                            let _ = tokio::io::copy_bidirectional(&mut TokioIo::new(upgraded), &mut target).await;
                        });
                        let empty = http_body_util::Full::new(hyper::body::Bytes::new()).boxed();
                        return Ok(hyper::Response::new(empty));
                    }
                    if request.uri().scheme().is_some() {
                        log.lock().unwrap().push(format!("{} {} {auth:?}", request.method(), request.uri()));
                    }
                    let redirect = match request.uri().path() {
                        "/old" => Some((307, "/mcp")),
                        "/moved" => Some((308, "/mcp")),
                        "/loop" => Some((307, "/loop")),
                        "/away" => Some((307, &*away)),
                        "/found" => Some((302, "/mcp")),
                        _ => None,
                    };
                    let response = match redirect {
                        Some((status, location)) => hyper::Response::builder()
                            .status(status)
                            .header("location", location)
                            .body(http_body_util::Full::new(hyper::body::Bytes::new()).boxed())
                            .unwrap(),
                        None => service.handle(request).await,
                    };
                    Ok::<_, std::convert::Infallible>(response)
                }
            });
            let tls = tls.clone();
            tokio::spawn(async move {
                let http = hyper::server::conn::http1::Builder::new();
                match tls {
                    None => {
                        let _ = http.serve_connection(TokioIo::new(stream), handler).with_upgrades().await;
                    }
                    Some(tls) => {
                        if let Ok(stream) = tls.accept(stream).await {
                            let _ = http.serve_connection(TokioIo::new(stream), handler).await;
                        }
                    }
                }
            });
        }
    });
    Served { addr, connections, proxied }
}

/// The binary with `args` and `env`; `SSL_CERT_FILE` and the proxy variables are unset unless
/// `env` sets them.
async fn run_async_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = tokio::process::Command::new(mcplens_bin());
    command.args(args).env("COLUMNS", "100").env_remove("SSL_CERT_FILE").kill_on_drop(true);
    for proxy in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"] {
        command.env_remove(proxy).env_remove(proxy.to_lowercase());
    }
    for (name, value) in env {
        command.env(name, value);
    }
    Run::from(tokio::time::timeout(Duration::from_secs(60), command.output()).await.expect("mcplens finished").unwrap())
}

async fn run_async(args: &[&str]) -> Run {
    run_async_env(args, &[]).await
}

/// A file in the temporary directory, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, contents: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("mcplens-cli-test-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_streamable_http() {
    let url = serve_http(options(&["--templates", "5", "--resources", "3", "--page-size", "2"])).await;

    let r = run_async(&["templates", "--url", &url]).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.lines().count(), 6, "{r:?}");
    // The default name is the server's own (the URL's host until it names itself).
    assert!(r.stdout.lines().nth(1).unwrap().starts_with("test-server "), "{r:?}");
    assert!(r.stderr.contains("5 resource templates from server \"test-server\" (3 pages"), "{r:?}");

    let r = run_async(&["templates", "--json", "--server", "web", "--url", &url]).await;
    assert_eq!(r.code, 0, "{r:?}");
    let expected = core_tool_output(&options(&["--templates", "5", "--page-size", "2"]), "web", "{}");
    assert_eq!(r.stdout.trim_end(), expected);

    let r = run_async(&["check", "--url", &url, "-H", "X-Test: 1", "-H", "Authorization: Bearer t0ken"]).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("resources/list: ok — 3 resources kept, 2 pages"), "{r:?}");
}

/// Requests reuse keep-alive connections: the number of TCP connections does not grow with the
/// number of requests (rmcp's default client keeps none idle, so each request opened its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_reuses_keep_alive_connections() {
    for templates in ["3", "30"] {
        let (url, connections) =
            serve_http_counting(options(&["--templates", templates, "--resources", "30", "--page-size", "1"])).await;
        let r = run_async(&["check", "--url", &url]).await;
        assert_eq!(r.code, 0, "{r:?}");
        assert!(r.stdout.contains(&format!("{templates} templates kept, {templates} pages")), "{r:?}");
        // initialize, initialized, 3 or 30 template pages, 30 resource pages and the session's
        // DELETE, all on one connection (no standalone GET stream is opened).
        let n = connections.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(n, 1, "{n} TCP connections for {templates} + 30 pages: requests did not reuse one connection");
    }
}

/// HTTPS end to end: a certificate made now for 127.0.0.1 and localhost, trusted through
/// `SSL_CERT_FILE` (added to the bundled roots); a session keeps one TLS connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_https_trusts_ssl_cert_file() {
    use std::sync::atomic::Ordering::SeqCst;
    let served = options(&["--templates", "5", "--resources", "3", "--page-size", "2"]);
    let (url, connections, pem) = serve_https(served, &["127.0.0.1", "localhost"]).await;
    let ca = TempFile::new("trusted.pem", &pem);
    let trust = [("SSL_CERT_FILE", ca.path())];

    let r = run_async_env(&["templates", "--url", &url], &trust).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.lines().count(), 6, "{r:?}");
    assert!(r.stdout.lines().nth(1).unwrap().starts_with("test-server "), "{r:?}");
    assert!(r.stderr.contains("5 resource templates from server \"test-server\" (3 pages"), "{r:?}");

    let r = run_async_env(&["templates", "--json", "--server", "web", "--url", &url], &trust).await;
    assert_eq!(r.code, 0, "{r:?}");
    let expected = core_tool_output(&options(&["--templates", "5", "--page-size", "2"]), "web", "{}");
    assert_eq!(r.stdout.trim_end(), expected);

    let before = connections.load(SeqCst);
    let r = run_async_env(&["check", "--url", &url, "-H", "Authorization: Bearer t0ken"], &trust).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("resources/list: ok — 3 resources kept, 2 pages"), "{r:?}");
    let n = connections.load(SeqCst) - before;
    assert_eq!(n, 1, "{n} TLS connections for one session: requests did not reuse one connection");

    // By name (SNI and a DNS name in the certificate), and through a same-origin redirect.
    let by_name = url.replace("127.0.0.1", "localhost");
    let r = run_async_env(&["templates", "--json", "--url", &by_name.replace("/mcp", "/old")], &trust).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json()["total"], 5, "{r:?}");
}

/// A certificate nobody vouches for fails the connection with `transport_error` (exit 3), named
/// as a certificate problem — also when `SSL_CERT_FILE` trusts another certificate, or the
/// trusted certificate is for another name. A broken `SSL_CERT_FILE` is a usage error for
/// https:// URLs (exit 2) and is not read for http:// ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_https_refuses_an_untrusted_certificate() {
    let served = options(&["--templates", "2"]);
    let (url, _, _) = serve_https(served.clone(), &["127.0.0.1"]).await;
    let prefix = "error: transport_error: the transport to server \"127.0.0.1\" failed during the handshake: ";

    let r = run_async_env(&["templates", "--url", &url], &[]).await;
    assert_eq!(r.code, 3, "{r:?}");
    assert_eq!(r.stdout, "", "{r:?}");
    assert!(r.stderr.starts_with(prefix), "{r:?}");
    assert!(r.stderr.contains("invalid peer certificate: UnknownIssuer"), "{r:?}");

    let r = run_async_env(&["check", "--json", "--url", &url], &[]).await;
    assert_eq!(r.code, 3, "{r:?}");
    assert_eq!(r.json()["error"]["code"], "transport_error", "{r:?}");
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("invalid peer certificate"), "{r:?}");

    // Trusting another certificate does not trust this one (the same issuer name, another key:
    // rustls says BadSignature).
    let other = TempFile::new("other.pem", &certificate(&["127.0.0.1"]).2);
    let r = run_async_env(&["templates", "--url", &url], &[("SSL_CERT_FILE", other.path())]).await;
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.starts_with(prefix), "{r:?}");
    assert!(r.stderr.contains("invalid peer certificate: BadSignature"), "{r:?}");

    // A trusted certificate for another name.
    let (elsewhere, _, elsewhere_pem) = serve_https(served, &["mcp.example"]).await;
    let ca = TempFile::new("elsewhere.pem", &elsewhere_pem);
    let r = run_async_env(&["templates", "--url", &elsewhere], &[("SSL_CERT_FILE", ca.path())]).await;
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.starts_with(prefix), "{r:?}");
    assert!(r.stderr.contains("invalid peer certificate"), "{r:?}");
    assert!(!r.stderr.contains("UnknownIssuer"), "{r:?}");

    // SSL_CERT_FILE fails closed.
    let empty = TempFile::new("empty.pem", "no certificate here\n");
    for (file, reason) in [
        ("/nonexistent/ca.pem", "error: invalid_argument: SSL_CERT_FILE \"/nonexistent/ca.pem\": No such file"),
        (empty.path(), "holds no usable PEM certificate"),
    ] {
        let r = run_async_env(&["templates", "--url", &url], &[("SSL_CERT_FILE", file)]).await;
        assert_eq!(r.code, 2, "{r:?}");
        assert!(r.stderr.contains(reason), "{r:?}");
    }
    let plain = serve_http(options(&["--templates", "2"])).await;
    let r = run_async_env(&["templates", "--url", &plain], &[("SSL_CERT_FILE", "/nonexistent/ca.pem")]).await;
    assert_eq!(r.code, 0, "{r:?}");
}

/// The environment's proxy is used: https:// through a `CONNECT` tunnel (TLS end to end),
/// http:// in absolute form, both with the proxy's credentials; `NO_PROXY` goes around it; a
/// proxy scheme other than http:// fails with a message saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_goes_through_the_environments_proxy() {
    let proxy = serve(options(&["--templates", "2"]), None).await;
    let proxy_url = format!("http://user:pw@{}", proxy.addr);
    let credentials = "Some(\"Basic dXNlcjpwdw==\")"; // user:pw

    // Nothing listens on port 1: only the proxy can answer.
    let r =
        run_async_env(&["templates", "--json", "--url", "http://localhost:1/mcp"], &[("HTTP_PROXY", &proxy_url)]).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json()["total"], 2, "{r:?}");
    let seen = std::mem::take(&mut *proxy.proxied.lock().unwrap());
    assert!(seen.iter().any(|s| s == &format!("POST http://localhost:1/mcp {credentials}")), "{seen:?}");
    assert!(seen.iter().all(|s| s.ends_with(credentials)), "{seen:?}");

    let (url, _, pem) = serve_https(options(&["--templates", "3"]), &["localhost"]).await;
    let url = url.replace("127.0.0.1", "localhost");
    let authority = url.trim_start_matches("https://").trim_end_matches("/mcp").to_owned();
    let ca = TempFile::new("proxied.pem", &pem);
    let env = [("HTTPS_PROXY", proxy_url.as_str()), ("SSL_CERT_FILE", ca.path())];
    let r = run_async_env(&["templates", "--json", "--url", &url], &env).await;
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.json()["total"], 3, "{r:?}");
    let seen = std::mem::take(&mut *proxy.proxied.lock().unwrap());
    assert_eq!(seen, [format!("CONNECT {authority} {credentials}")], "one tunnel for the session");

    let env = [("HTTPS_PROXY", "http://127.0.0.1:9"), ("NO_PROXY", "localhost"), ("SSL_CERT_FILE", ca.path())];
    let r = run_async_env(&["templates", "--json", "--url", &url], &env).await;
    assert_eq!(r.code, 0, "{r:?}");

    let env = [("HTTPS_PROXY", "socks5://127.0.0.1:9"), ("SSL_CERT_FILE", ca.path())];
    let r = run_async_env(&["templates", "--url", &url], &env).await;
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("proxy scheme \"socks5\" is not supported (only http:// proxies)"), "{r:?}");
}

/// Redirects: same-origin 307 and 308 are followed (method, body and headers kept), at most 10;
/// a redirect to another origin or a 302 is not followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_follows_same_origin_307_and_308_only() {
    let url = serve_http(options(&["--templates", "3", "--page-size", "1"])).await;
    for path in ["/old", "/moved"] {
        let r = run_async(&["templates", "--json", "--url", &url.replace("/mcp", path), "-H", "X-Test: 1"]).await;
        assert_eq!(r.code, 0, "{path}: {r:?}");
        assert_eq!(r.json()["total"], 3, "{path}: {r:?}");
    }
    let r = run_async(&["templates", "--url", &url.replace("/mcp", "/loop")]).await;
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("more than 10 redirects"), "{r:?}");
    for (path, status) in [("/away", "307 Temporary Redirect"), ("/found", "302 Found")] {
        let r = run_async(&["templates", "--url", &url.replace("/mcp", path)]).await;
        assert_eq!(r.code, 3, "{path}: {r:?}");
        assert!(r.stderr.starts_with("error: transport_error: "), "{path}: {r:?}");
        assert!(r.stderr.contains(&format!("HTTP {status}")), "{path}: {r:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Protocol eras, against the Python `mcp` SDK (2.3 serves both, 1.30 only `initialize`)
// ---------------------------------------------------------------------------------------------

/// The Python of the `.build/venv-mcp{major}` test environment (`make` creates it), or `None`
/// when it is missing and MCPLENS_REQUIRE_PYTHON_SERVERS is not 1.
fn sdk_python(major: u8) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let python = root.join(format!(".build/venv-mcp{major}/bin/python"));
    if python.exists() {
        return Some(python.to_string_lossy().into_owned());
    }
    let required = std::env::var("MCPLENS_REQUIRE_PYTHON_SERVERS").is_ok_and(|v| v == "1");
    assert!(!required, "MCPLENS_REQUIRE_PYTHON_SERVERS=1 but {} is missing: run `make test-cli`", python.display());
    eprintln!("did not run against mcp {major}.x: {} is missing (`make test-cli` creates it)", python.display());
    None
}

fn era_server() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/era_server.py").to_string_lossy().into_owned()
}

/// `era_server.py http` on 127.0.0.1, killed on drop.
struct HttpEraServer {
    child: std::process::Child,
    url: String,
}

impl HttpEraServer {
    fn start(python: &str) -> HttpEraServer {
        use std::io::BufRead;
        let mut child = Command::new(python)
            .args([&era_server(), "http"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the era server starts");
        let mut url = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut url).unwrap();
        HttpEraServer { child, url: url.trim().to_owned() }
    }
}

impl Drop for HttpEraServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The era server's one template: `(name, title)` = ("protocol <revision the request came
/// with>", "initialize offered <revision>" or "no initialize").
fn era_seen(r: &Run) -> (String, String) {
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    let t = &out["resourceTemplates"][0];
    (t["name"].as_str().unwrap().to_owned(), t["title"].as_str().unwrap().to_owned())
}

fn seen(protocol: &str, title: &str) -> (String, String) {
    (format!("protocol {protocol}"), title.to_owned())
}

/// `auto` reaches an mcp 2.3 server on 2026-07-28 through `server/discover` (no `initialize`);
/// a revision with `initialize` is offered only that way — over stdio and streamable HTTP.
#[test]
fn mcp2_server_on_both_eras() {
    let Some(python) = sdk_python(2) else { return };
    let server = era_server();
    let http = HttpEraServer::start(&python);
    let endpoints: [Vec<&str>; 2] = [vec!["--", &python, &server, "stdio"], vec!["--url", &http.url]];
    for endpoint in &endpoints {
        let templates = |protocol: &str| {
            let args: Vec<&str> = ["templates", "--json", "--protocol-version", protocol]
                .into_iter()
                .chain(endpoint.iter().copied())
                .collect();
            era_seen(&run_raw(&args))
        };
        assert_eq!(templates("auto"), seen("2026-07-28", "no initialize"), "{endpoint:?}");
        assert_eq!(templates("2026-07-28"), seen("2026-07-28", "no initialize"), "{endpoint:?}");
        assert_eq!(templates("2025-11-25"), seen("2025-11-25", "initialize offered 2025-11-25"), "{endpoint:?}");
        assert_eq!(templates("2025-06-18"), seen("2025-06-18", "initialize offered 2025-06-18"), "{endpoint:?}");

        let args: Vec<&str> = ["check"].into_iter().chain(endpoint.iter().copied()).collect();
        let r = run_raw(&args);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(
            r.stdout.starts_with("mcplens check: server ") && r.stdout.contains("(protocol 2026-07-28)\n"),
            "{r:?}"
        );
    }
}

/// A server that predates 2026-07-28 (mcp 1.30) answers `server/discover` with an error; `auto`
/// then offers 2025-11-25 in `initialize`. Asking for 2026-07-28 alone fails to connect.
#[test]
fn mcp1_server_gets_initialize_after_discover() {
    let Some(python) = sdk_python(1) else { return };
    let server = era_server();
    let http = HttpEraServer::start(&python);
    let endpoints: [Vec<&str>; 2] = [vec!["--", &python, &server, "stdio"], vec!["--url", &http.url]];
    for endpoint in &endpoints {
        let args: Vec<&str> = ["templates", "--json"].into_iter().chain(endpoint.iter().copied()).collect();
        assert_eq!(era_seen(&run_raw(&args)), seen("2025-11-25", "initialize offered 2025-11-25"), "{endpoint:?}");

        let args: Vec<&str> =
            ["check", "--protocol-version", "2026-07-28"].into_iter().chain(endpoint.iter().copied()).collect();
        let r = run_raw(&args);
        assert_eq!(r.code, 3, "{r:?}");
        assert!(r.stderr.contains("refused server/discover with JSON-RPC error"), "{r:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// @modelcontextprotocol/server-everything
// ---------------------------------------------------------------------------------------------

fn server_everything() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let entry = root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    entry.exists().then_some(entry)
}

#[test]
fn server_everything_templates_and_check() {
    let required = std::env::var("MCPLENS_REQUIRE_EVERYTHING").is_ok_and(|v| v == "1");
    let Some(entry) = server_everything() else {
        assert!(
            !required,
            "MCPLENS_REQUIRE_EVERYTHING=1 but node_modules/@modelcontextprotocol/server-everything is not \
             installed: run `npm ci` at the repository root"
        );
        eprintln!("server_everything_templates_and_check: did not run (server-everything not installed; `npm ci`)");
        return;
    };
    let entry = entry.to_string_lossy().into_owned();
    let r = run_raw(&["templates", "--server", "everything", "--", "node", &entry, "stdio"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("demo://resource/dynamic/text/{resourceId}"), "{r:?}");
    let mut lines = r.stdout.lines();
    lines.next(); // the header
    assert!(lines.all(|l| l.starts_with("everything ")), "{r:?}");

    let r = run_raw(&["templates", "--json", "--", "node", &entry, "stdio"]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = r.json();
    assert!(out["total"].as_u64().unwrap() >= 1);
    assert_eq!(out["resourceTemplates"][0]["server"], "mcp-servers/everything"); // its serverInfo.name

    let r = run_raw(&["check", "--", "node", &entry, "stdio"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("resources/list: ok"), "{r:?}");
}

/// The first run, as a new user meets it: a server command without `--` gets a hint; a
/// `templates --json` page that is not all says so on stderr; a server slow to start is said
/// after a second (on a terminal, or `--progress always`).
#[test]
fn first_run_hints() {
    let r = run_raw(&["templates", "python3", "server.py"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("hint: put \"--\" before the server's command, after mcplens' own options: mcplens templates [OPTIONS] -- python3 …"),
        "{}",
        r.stderr
    );
    assert!(!run_raw(&["templates", "--nope"]).stderr.contains("hint:"), "a bad flag is not a missing --");

    let r = run(&["templates", "--json"], &["--templates", "150"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!((page["total"].as_u64(), page["nextOffset"].as_u64()), (Some(150), Some(100)));
    assert!(
        r.stderr.contains("100 of 150 templates printed (\"nextOffset\": 100); the rest with --offset 100"),
        "{}",
        r.stderr
    );
    let all = run(&["templates", "--json", "--limit", "1000"], &["--templates", "150"]);
    assert!(!all.stderr.contains("templates printed"), "{}", all.stderr);

    // A server that takes 3 s to start (well past the 1 s after which it is said).
    let slow = format!("sleep 3; exec '{}' --templates 1", test_server());
    let r = run_raw(&["templates", "--progress", "always", "--server", "slow", "--", "sh", "-c", &slow]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("starting slow… "), "{:?}", r.stderr);
}
