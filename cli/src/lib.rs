//! `mcplens`: bounded MCP resource discovery against a real server, from the command line.
//!
//! - `mcplens templates …` / `mcplens resources …`: one bounded traversal, printed as a table or
//!   as JSON (the `ListMcpResourceTemplatesTool` output / the listing).
//! - `mcplens check …`: both traversals, reported for server authors: what clients will drop or
//!   refuse.
//!
//! Every rule (paging, validation, sanitizing, bounds, the tool's output) is the core's; this
//! crate connects, prints and picks exit codes. See `cli/README.md`.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use mcplens::catalog::Failure;
use mcplens::discovery::{Limits, ListKind, Listing, RepeatedCursors, Support};
use mcplens::DiscoveryError;

mod check;
mod connect;
mod events;
mod http;
mod outcome;
mod progress;
mod relay;
mod report;
mod route;
mod serve;
mod table;
mod tls;
mod upstream;

use connect::{ConnectError, Connection, Endpoint, Protocol, RequestCounter};
use outcome::{exit, Stop, Traversal};
use progress::Progress;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (check: nothing clients would drop or refuse)
  1  a traversal failed, the listing tool failed, or check found problems
  2  usage error (bad flags, invalid limits, bad URL)
  3  could not connect (the server did not start, was unreachable, or did not finish the
     handshake, server/discover or initialize, within --connect-timeout-ms)

Errors are printed to stderr as `error: <code>: <explanation>`, where <code> is a stable code from
docs/errors.md (e.g. repeated_cursor, page_limit, deadline, server_error, transport_error,
invalid_argument, output_too_large). Nothing a server sends is printed unsanitized.";

const ABOUT: &str = "Bounded MCP resource discovery against a real server";

const LONG_ABOUT: &str = "\
Bounded MCP resource discovery against a real server.

mcplens starts a stdio MCP server (the command after `--`) or connects to a streamable HTTP
server (--url), then lists its resource templates or resources the way an mcplens client does:
every page validated, every string sanitized, every traversal bounded (--max-pages, --max-items,
--max-bytes, --deadline-ms). `check` tells server authors what clients will drop or refuse.

Examples:
  mcplens templates -- node dist/index.js stdio
  mcplens templates --json --url http://127.0.0.1:3000/mcp
  mcplens resources --server docs -- python -m docs_server
  mcplens check -- ./my-server --flag";

#[derive(Debug, Parser)]
#[command(name = "mcplens", version, about = ABOUT, long_about = LONG_ABOUT, after_long_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List a server's resource templates (resources/templates/list)
    #[command(after_long_help = EXIT_CODES)]
    Templates {
        #[command(flatten)]
        target: Target,
        /// Print the ListMcpResourceTemplatesTool output (what a model sees) instead of a table
        #[arg(long)]
        json: bool,
        /// With --json: the tool's `offset` input (templates to skip)
        #[arg(long, value_name = "N", requires = "json")]
        offset: Option<u64>,
        /// With --json: the tool's `limit` input (templates to return, 1 to 1000; default 100)
        #[arg(long, value_name = "N", requires = "json")]
        limit: Option<u64>,
    },
    /// List a server's concrete resources (resources/list)
    #[command(after_long_help = EXIT_CODES)]
    Resources {
        #[command(flatten)]
        target: Target,
        /// Print the listing as JSON (items, support, diagnostics) instead of a table
        #[arg(long)]
        json: bool,
    },
    /// For server authors: run both traversals and report what clients will drop or refuse
    #[command(after_long_help = EXIT_CODES)]
    Check {
        #[command(flatten)]
        target: Target,
        /// Print the report as JSON
        #[arg(long)]
        json: bool,
    },
    /// Read a tracking events file (JSONL, docs/events.md)
    #[command(subcommand)]
    Events(EventsCommand),
    /// Stand in for a stdio server: relay a host's messages unchanged, add the resource tools,
    /// and record every request as an event
    #[command(after_long_help = PROXY_EXIT_CODES)]
    Proxy(ProxyArgs),
}

const PROXY_EXIT_CODES: &str = "\
Exit codes:
  0  the host closed the proxy's stdin (the server's stdin is closed, and the server killed if it
     has not exited within 2 s)
  N  the server ended first: its exit code (1 when a signal ended it)
  130, 143  SIGINT, SIGTERM (the server is closed and killed as above)
  2  usage error (bad flags, a bad --config)
  3  the server command could not be started";

/// `mcplens proxy [options] -- <server command …>`.
#[derive(Debug, Args)]
struct ProxyArgs {
    /// Relay and record only: no resource tools
    #[arg(long)]
    no_tools: bool,
    /// Resource tools only: no events
    #[arg(long)]
    no_tracking: bool,
    /// Prefix of the resource tools' names, so they cannot collide with the server's
    #[arg(long, value_name = "PREFIX", default_value = mcplens::proxy::DEFAULT_TOOL_PREFIX)]
    tool_prefix: String,
    /// The server's name in the tools' output (default: its serverInfo.name)
    #[arg(long, value_name = "NAME")]
    server: Option<String>,
    /// The JSONL events file (default ./mcplens-events.jsonl, unless --config names exporters)
    #[arg(long, value_name = "FILE", conflicts_with = "no_tracking")]
    events: Option<std::path::PathBuf>,
    /// The tracker configuration: a JSON file of the core's TrackerConfig (docs/tracking.md)
    #[arg(long, value_name = "FILE", conflicts_with = "no_tracking")]
    config: Option<std::path::PathBuf>,
    /// Export spans and metrics over OTLP/HTTP to this base URL (…/v1/traces, …/v1/metrics);
    /// with --events, to both
    #[arg(long, value_name = "URL", conflicts_with = "no_tracking")]
    otlp: Option<String>,
    /// Requests per traversal of the server's lists
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_pages)]
    max_pages: u32,
    /// Items per traversal
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_items)]
    max_items: usize,
    /// UTF-8 bytes of projected metadata per traversal
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_bytes)]
    max_bytes: usize,
    /// Time for one complete traversal, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = Limits::default().deadline.as_millis() as u64)]
    deadline_ms: u64,
    /// The longest message relayed, in bytes, either way (a longer line or HTTP message is
    /// dropped and said on stderr)
    #[arg(long, value_name = "N", default_value_t = mcplens::proxy::DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    /// The read tool's output cap, in characters (1000 to 10000000): what reaches the model;
    /// hosts cut a tool result again (Codex at about 12,000 characters)
    #[arg(long, value_name = "CHARS", default_value_t = mcplens::proxy::DEFAULT_READ_OUTPUT_CHARS)]
    max_read_chars: usize,
    /// A streamable-HTTP server instead of a command
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// Extra HTTP header for --url, as "Name: value" (repeatable), e.g. "Authorization: Bearer …"
    #[arg(short = 'H', long = "header", value_name = "HEADER", requires = "url")]
    headers: Vec<String>,
    /// The stdio server to start: program and arguments, after `--`
    #[arg(last = true, value_name = "COMMAND", required_unless_present = "url")]
    command: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum EventsCommand {
    /// Per event type and per resource URI: count, error rate, p50/p95/p99 duration
    Summary {
        /// The events file
        #[arg(default_value = "mcplens-events.jsonl")]
        file: std::path::PathBuf,
        /// Print the summary as JSON
        #[arg(long)]
        json: bool,
    },
    /// Print the last events, one line each
    Tail {
        /// The events file
        #[arg(default_value = "mcplens-events.jsonl")]
        file: std::path::PathBuf,
        /// Keep printing events as they are appended (follows rotation)
        #[arg(short, long)]
        follow: bool,
        /// How many of the last events to print first
        #[arg(short = 'n', long, default_value_t = 10)]
        lines: usize,
    },
    /// Write one self-contained HTML report (no network, no script) of one or more events files
    Report {
        /// The events files (each read with its rotated siblings FILE.1 … FILE.N)
        #[arg(default_value = "mcplens-events.jsonl")]
        files: Vec<std::path::PathBuf>,
        /// Where to write the page (`-` for stdout)
        #[arg(short, long, value_name = "PATH", default_value = "mcplens-report.html")]
        output: std::path::PathBuf,
        #[command(flatten)]
        view: ReportView,
        /// Progress bar on stderr while reading
        #[arg(long, value_enum, value_name = "WHEN", default_value_t = ProgressMode::Auto)]
        progress: ProgressMode,
    },
    /// Serve the report live on 127.0.0.1, updated as the files grow (read-only)
    Serve {
        /// The events files (each read with its rotated siblings; they may not exist yet)
        #[arg(default_value = "mcplens-events.jsonl")]
        files: Vec<std::path::PathBuf>,
        /// The port (0: any free port; the URL is printed)
        #[arg(long, default_value_t = 8765)]
        port: u16,
        /// The address to listen on; anything but a loopback address needs --allow-remote
        #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// Allow a non-loopback --bind: whoever reaches it sees every tool name, URI and error
        /// message in the events
        #[arg(long)]
        allow_remote: bool,
        /// Require the token in this file (at least 16 characters) as `Authorization: Bearer`
        /// or in the first URL; with a non-loopback --bind and no file, a token is generated and
        /// printed once in the URL
        #[arg(long, value_name = "FILE")]
        token_file: Option<std::path::PathBuf>,
        #[command(flatten)]
        view: ReportView,
    },
}

/// What the report shows (shared by `report` and `serve`).
#[derive(Debug, Args)]
struct ReportView {
    /// Resource templates to group reads by, besides those in resources/templates/list events:
    /// a file with `mcplens templates --json` output, a JSON array, or one template per line
    #[arg(long, value_name = "FILE")]
    templates: Option<std::path::PathBuf>,
    /// Rows per table (the rest summed in one row)
    #[arg(long, value_name = "N", default_value_t = 20)]
    top: usize,
    /// Keys kept per table of tools, URIs, templates, prompts, errors and clients (past it,
    /// counts carry a stated bound)
    #[arg(long, value_name = "N", default_value_t = 1000)]
    max_keys: usize,
    /// Read only the files named, not their rotated siblings
    #[arg(long)]
    no_rotated: bool,
}

impl ReportView {
    fn resolve(
        &self,
        files: Vec<std::path::PathBuf>,
    ) -> Result<(report::files::FileSet, report::Options, report::Templates), Stop> {
        if self.top == 0 || self.max_keys == 0 {
            return Err(Stop::usage("--top and --max-keys must be at least 1"));
        }
        let mut templates = report::Templates::default();
        if let Some(path) = &self.templates {
            let text = std::fs::read_to_string(path).map_err(|e| Stop {
                code: "io_error",
                message: format!("cannot read {}: {}", path.display(), e.kind()),
                exit: exit::FAILED,
            })?;
            templates.extend(report::templates_from_file(&text));
        }
        let options = report::Options { top: self.top, max_keys: self.max_keys.max(self.top) };
        Ok((report::files::FileSet::new(files, !self.no_rotated), options, templates))
    }
}

fn events_command(cmd: EventsCommand) -> Result<u8, Stop> {
    let io = |path: &std::path::Path, e: std::io::Error| Stop {
        code: "io_error",
        message: format!("cannot read {}: {}", path.display(), e.kind()),
        exit: exit::FAILED,
    };
    let mut out = std::io::stdout().lock();
    match cmd {
        EventsCommand::Summary { file, json } => {
            let f = std::fs::File::open(&file).map_err(|e| io(&file, e))?;
            let summary = events::summarize(std::io::BufReader::new(f)).map_err(|e| io(&file, e))?;
            let written = if json {
                serde_json::to_writer_pretty(&mut out, &summary)
                    .map_err(std::io::Error::from)
                    .and_then(|()| writeln!(out))
            } else {
                events::print_summary(&mut out, &summary)
            };
            written.map_err(|e| io(&file, e))?;
            Ok(exit::OK)
        }
        EventsCommand::Tail { file, follow, lines } => {
            events::tail(&mut out, &file, lines, follow).map_err(|e| io(&file, e))?;
            Ok(exit::OK)
        }
        EventsCommand::Report { files, output, view, progress } => {
            let (mut set, options, templates) = view.resolve(files)?;
            let (enabled, first) = match progress {
                ProgressMode::Auto => (std::io::stderr().is_terminal(), progress::FIRST_DRAW),
                ProgressMode::Always => (true, Duration::ZERO),
                ProgressMode::Never => (false, Duration::ZERO),
            };
            let started = Instant::now();
            let fail = |e: std::io::Error| Stop { code: "io_error", message: e.to_string(), exit: exit::FAILED };
            let stats = report::collect(&mut set, &options, templates, false, |total| {
                progress::Bar::new(enabled, first, "reading events", total)
            })
            .map_err(fail)?;
            let files = set.files();
            let page = report::html::report(&stats, &files);
            if output.as_os_str() == "-" {
                out.write_all(page.as_bytes()).map_err(fail)?;
            } else {
                std::fs::write(&output, page.as_bytes()).map_err(|e| Stop {
                    code: "io_error",
                    message: format!("cannot write {}: {}", output.display(), e.kind()),
                    exit: exit::FAILED,
                })?;
            }
            eprintln!(
                "{}: {} events from {} {} ({} {} not events) in {:.2} s",
                if output.as_os_str() == "-" { "report".to_owned() } else { output.display().to_string() },
                report::html::int(stats.events),
                files.len(),
                if files.len() == 1 { "file" } else { "files" },
                report::html::int(stats.bad_lines),
                if stats.bad_lines == 1 { "line was" } else { "lines were" },
                started.elapsed().as_secs_f64()
            );
            Ok(exit::OK)
        }
        EventsCommand::Serve { .. } => unreachable!("served by serve_command"),
    }
}

fn serve_command(cmd: EventsCommand, runtime: &tokio::runtime::Runtime) -> Result<u8, Stop> {
    let EventsCommand::Serve { files, port, bind, allow_remote, token_file, view } = cmd else { unreachable!() };
    let (set, options, templates) = view.resolve(files)?;
    let stop = |e: serve::ServeError| Stop {
        code: e.code,
        exit: if e.code == "invalid_argument" { exit::USAGE } else { exit::FAILED },
        message: e.message,
    };
    let token = serve::Token::new(token_file.as_deref(), !bind.is_loopback()).map_err(stop)?;
    let listener = serve::bind(bind, port, allow_remote).map_err(stop)?;
    let addr =
        listener.local_addr().map_err(|e| Stop { code: "io_error", message: e.to_string(), exit: exit::FAILED })?;
    if !bind.is_loopback() {
        eprintln!(
            "warning: serving on {addr}, which is not a loopback address: anyone who can reach it and holds the token \
             can read these events"
        );
    }
    let host = if addr.is_ipv6() { format!("[{}]", addr.ip()) } else { addr.ip().to_string() };
    let query = match &token {
        Some(t) if t.generated => format!("?token={}", t.reveal()),
        _ => String::new(),
    };
    let note = if token.as_ref().is_some_and(|t| !t.generated) { "; the token in --token-file required" } else { "" };
    println!("serving http://{host}:{}/{query} (read-only{note}; Ctrl-C to stop)", addr.port());
    let _ = std::io::stdout().flush();
    serve::run(listener, set, options, templates, token, runtime).map_err(stop)?;
    Ok(exit::OK)
}

/// Which server, and the bounds of each traversal.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("endpoint").required(true).args(["url", "command"])))]
struct Target {
    /// Connect to a streamable HTTP server at this http(s) URL instead of starting a command
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Extra HTTP header for --url, as "Name: value" (repeatable). "Authorization: Bearer …"
    /// is sent as the bearer token
    #[arg(short = 'H', long = "header", value_name = "HEADER", requires = "url")]
    headers: Vec<String>,
    /// The server's name in the output (default: its `serverInfo.name`, sanitized; before it
    /// names itself, the script's name for `python server.py`/`node server.mjs`/`npx pkg`, the
    /// command's file name, or the URL's host)
    #[arg(long, value_name = "NAME")]
    server: Option<String>,
    /// Requests per traversal
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_pages)]
    max_pages: u32,
    /// Items per traversal
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_items)]
    max_items: usize,
    /// UTF-8 bytes of projected metadata per traversal
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_bytes)]
    max_bytes: usize,
    /// Time for one complete traversal, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = Limits::default().deadline.as_millis() as u64)]
    deadline_ms: u64,
    /// Time to start or reach the server and complete the handshake, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    connect_timeout_ms: u64,
    /// Progress line on stderr during long traversals
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ProgressMode::Auto)]
    progress: ProgressMode,
    /// The protocol revision to speak: `auto` sends `server/discover` (2026-07-28) and falls back
    /// to `initialize` (2025-11-25) for a server that predates it; a revision speaks only that
    /// one (`initialize` for 2025-11-25 and older, `server/discover` for 2026-07-28)
    #[arg(long, value_name = "VERSION", default_value = "auto")]
    protocol_version: String,
    /// What a cursor already sent does: `by-era` fails before 2026-07-28 and follows it on
    /// 2026-07-28 (the page bound then ends a server that repeats forever); `fail`; `follow`
    #[arg(long, value_enum, value_name = "RULE", default_value_t = Repeats::ByEra)]
    repeated_cursors: Repeats,
    /// The longest cursor accepted, in bytes (a longer one is `malformed_result`)
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_cursor_bytes)]
    max_cursor_bytes: usize,
    /// The stdio server to start: program and arguments, after `--`
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// `--repeated-cursors` (the core's `RepeatedCursors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Repeats {
    ByEra,
    Fail,
    Follow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProgressMode {
    /// Only when stderr is a terminal
    Auto,
    Always,
    Never,
}

/// A resolved [`Target`].
struct Plan {
    endpoint: Endpoint,
    server: String,
    /// `--server` was given: the server's own name does not replace it.
    named: bool,
    limits: Limits,
    protocol: Protocol,
    connect_timeout: Duration,
    progress: bool,
}

impl Target {
    fn plan(&self) -> Result<Plan, Stop> {
        let limits = Limits {
            max_pages: self.max_pages,
            max_items: self.max_items,
            max_bytes: self.max_bytes,
            deadline: Duration::from_millis(self.deadline_ms),
            repeated_cursors: match self.repeated_cursors {
                Repeats::ByEra => RepeatedCursors::ByEra,
                Repeats::Fail => RepeatedCursors::Fail,
                Repeats::Follow => RepeatedCursors::Follow,
            },
            max_cursor_bytes: self.max_cursor_bytes,
        };
        limits.validate().map_err(|e| Stop::usage(e.to_string()))?;
        if self.connect_timeout_ms == 0 {
            return Err(Stop::usage("--connect-timeout-ms must be greater than zero"));
        }
        let (endpoint, default_name) = match &self.url {
            Some(url) => {
                let parsed = url::Url::parse(url).map_err(|e| Stop::usage(format!("--url: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(Stop::usage("--url must be an http:// or https:// URL"));
                }
                let host = parsed.host_str().unwrap_or("server").to_owned();
                let mut headers = Vec::new();
                for h in &self.headers {
                    let (name, value) =
                        h.split_once(':').ok_or_else(|| Stop::usage("--header must look like \"Name: value\""))?;
                    headers.push((name.trim().to_owned(), value.trim().to_owned()));
                }
                (Endpoint::Http { url: url.clone(), headers }, host)
            }
            None => {
                if self.command.is_empty() {
                    return Err(Stop::usage("no server command after `--`"));
                }
                (Endpoint::Stdio(self.command.clone()), command_name(&self.command))
            }
        };
        let server = match &self.server {
            Some(s) if s.trim().is_empty() => return Err(Stop::usage("--server must not be empty")),
            Some(s) => s.clone(),
            None => default_name,
        };
        let progress = match self.progress {
            ProgressMode::Auto => std::io::stderr().is_terminal(),
            ProgressMode::Always => true,
            ProgressMode::Never => false,
        };
        let protocol = Protocol::parse(&self.protocol_version).map_err(Stop::usage)?;
        let connect_timeout = Duration::from_millis(self.connect_timeout_ms);
        Ok(Plan { endpoint, server, named: self.server.is_some(), limits, protocol, connect_timeout, progress })
    }
}

/// Programs that run a script or package named by their arguments: the server is named after that.
const RUNNERS: [&str; 12] =
    ["python", "python3", "py", "node", "nodejs", "deno", "bun", "uv", "uvx", "npx", "pipx", "ruby"];

/// The default name of a stdio server before it names itself: the program's file name, or for a
/// runner (`python server.py`, `python -m pkg`, `node server.mjs`, `uv run server.py`, `npx -y pkg`)
/// the file stem of the first argument that is not an option or a `run` subcommand.
fn command_name(command: &[String]) -> String {
    let file_name =
        |s: &str| Path::new(s).file_name().map_or_else(|| s.to_owned(), |n| n.to_string_lossy().into_owned());
    let program = file_name(&command[0]);
    let stem = program.strip_suffix(".exe").unwrap_or(&program);
    let runner = RUNNERS.contains(&stem) || stem.strip_prefix("python3.").is_some_and(|v| v.parse::<u32>().is_ok());
    let script = command[1..].iter().find(|a| !a.starts_with('-') && a.as_str() != "run");
    match script.filter(|_| runner) {
        Some(script) => {
            let name = file_name(script);
            Path::new(&name).file_stem().map_or(name.clone(), |s| s.to_string_lossy().into_owned())
        }
        None => program,
    }
}

impl Plan {
    /// Connects; without `--server`, the server is named by its `serverInfo.name` (sanitized) when
    /// it gives one.
    async fn connect(&mut self) -> Result<Connection, ConnectError> {
        let starting = Progress::starting(self.progress, &self.server);
        let conn = connect::connect(&self.endpoint, &self.server, &self.protocol, self.connect_timeout).await;
        starting.finish().await;
        let conn = conn?;
        if !self.named {
            if let Some(name) = conn.server_name() {
                self.server = name;
            }
        }
        Ok(conn)
    }

    /// One traversal, with the progress line; returns the outcome, the requests sent and the
    /// elapsed time.
    async fn traverse(&self, conn: &Connection, kind: ListKind) -> Traversal {
        let counter: Arc<RequestCounter> = conn.requests.clone();
        let before = counter.sent(kind.method());
        let progress = Progress::start(self.progress, &self.server, kind.method(), counter.clone());
        let started = Instant::now();
        let result = mcplens::rmcp::list(conn.peer(), kind, &self.server, self.limits).await;
        let elapsed = started.elapsed();
        progress.finish().await;
        Traversal { kind, result, requests: counter.sent(kind.method()) - before, elapsed }
    }
}

/// Runs the `mcplens` command line with `args` (the first is the program name, as in
/// [`std::env::args_os`]) and returns the exit code. Usage errors, `--help` and `--version` are
/// printed here, never by exiting the process: the Python and Node packages call this from their
/// `mcplens` entry points, in their own process.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            if let Some(hint) = missing_separator(&e, &args) {
                eprintln!("{hint}");
            }
            return if e.use_stderr() { exit::USAGE } else { exit::OK };
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: internal: could not start the async runtime: {e}");
            return exit::FAILED;
        }
    };
    let code = match cli.command {
        Command::Events(cmd @ EventsCommand::Serve { .. }) => finish(serve_command(cmd, &runtime)),
        command => runtime.block_on(dispatch(command)),
    };
    // Do not wait for a stdio server that ignores end of input: it is killed on drop.
    runtime.shutdown_timeout(Duration::from_millis(500));
    code
}

/// The hint for a server command given without `--` before it (`mcplens templates python3
/// server.py`): clap sees an unexpected argument that is not a flag.
fn missing_separator(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument || args.iter().any(|a| a == "--") {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else { return None };
    let sub = args.get(1)?.to_str()?;
    if arg.starts_with('-') || !matches!(sub, "templates" | "resources" | "check" | "proxy") {
        return None;
    }
    let arg = mcplens::sanitize::label(arg);
    Some(format!(
        "hint: put \"--\" before the server's command, after mcplens' own options: mcplens {sub} [OPTIONS] -- {arg} …"
    ))
}

async fn dispatch(command: Command) -> u8 {
    let result = match command {
        Command::Templates { target, json, offset, limit } => {
            // The tool's own input rules (e.g. limit 1..=1000), checked before connecting.
            let input = serde_json::json!({ "offset": offset, "limit": limit });
            match mcplens::tool::Input::from_value(input) {
                Ok(input) => list_command(&target, ListKind::ResourceTemplates, json, input).await,
                Err(e) => Err(Stop::usage(e.to_string())),
            }
        }
        Command::Resources { target, json } => {
            list_command(&target, ListKind::Resources, json, mcplens::tool::Input::default()).await
        }
        Command::Check { target, json } => check_command(&target, json).await,
        Command::Events(cmd) => events_command(cmd),
        Command::Proxy(args) => proxy_command(args).await,
    };
    finish(result)
}

async fn proxy_command(args: ProxyArgs) -> Result<u8, Stop> {
    let tracker = if args.no_tracking {
        None
    } else {
        Some(relay::tracker_config(args.config.as_ref(), args.events.as_ref(), args.otlp.as_deref())?)
    };
    let config = mcplens::proxy::ProxyConfig {
        tools: !args.no_tools,
        tracking: !args.no_tracking,
        tool_prefix: args.tool_prefix,
        server: args.server,
        limits: Limits {
            max_pages: args.max_pages,
            max_items: args.max_items,
            max_bytes: args.max_bytes,
            deadline: Duration::from_millis(args.deadline_ms),
            ..Limits::default()
        },
        seed: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
        max_message_bytes: args.max_message_bytes,
        read: mcplens::tool::ReadConfig {
            max_output_chars: args.max_read_chars,
            ..mcplens::tool::ReadConfig::default()
        },
        ..mcplens::proxy::ProxyConfig::default()
    };
    let target = match args.url {
        Some(url) => relay::Target::Url { url, headers: upstream::headers(&args.headers)? },
        None if !args.headers.is_empty() => return Err(Stop::usage("--header goes with --url")),
        None => relay::Target::Command(args.command),
    };
    if args.max_message_bytes < 1024 {
        return Err(Stop::usage("--max-message-bytes must be at least 1024"));
    }
    relay::run(relay::Options { target, config, tracker, max_message: args.max_message_bytes }).await
}

/// The exit code of a command, its error printed.
fn finish(result: Result<u8, Stop>) -> u8 {
    match result {
        Ok(code) => code,
        Err(stop) => {
            eprintln!("error: {}: {}", stop.code, stop.message);
            stop.exit
        }
    }
}

/// Why a command could not list: it could not connect, or the traversal failed.
enum NotListed {
    Connect(ConnectError),
    Traversal(DiscoveryError),
}

impl NotListed {
    /// The failure as the listing tool reports it (under `failures`).
    fn failure(&self) -> Failure {
        match self {
            NotListed::Connect(e) => Failure { code: e.code, message: e.message.clone() },
            NotListed::Traversal(e) => Failure::from(e),
        }
    }

    /// The `error` member of `resources --json` and `check --json`: the stable code, our message,
    /// and a stdio server's stderr tail when it could not be reached.
    fn to_json(&self) -> serde_json::Value {
        let Failure { code, message } = self.failure();
        let mut error = serde_json::json!({ "code": code, "message": message });
        if let NotListed::Connect(e) = self {
            if !e.stderr_tail.is_empty() {
                error["stderrTail"] = serde_json::json!(e.stderr_tail);
            }
        }
        error
    }
}

impl From<NotListed> for Stop {
    fn from(e: NotListed) -> Stop {
        match e {
            NotListed::Connect(e) => e.into(),
            NotListed::Traversal(e) => e.into(),
        }
    }
}

async fn list_command(target: &Target, kind: ListKind, json: bool, input: mcplens::tool::Input) -> Result<u8, Stop> {
    let mut plan = target.plan()?;
    let listed = match plan.connect().await {
        Ok(conn) => {
            let traversal = plan.traverse(&conn, kind).await;
            conn.close().await;
            traversal.result.map_err(NotListed::Traversal)
        }
        // A usage error found while connecting (a bad header) prints no document.
        Err(e) if e.code == "invalid_argument" => return Err(e.into()),
        Err(e) => Err(NotListed::Connect(e)),
    };
    let mut out = std::io::stdout().lock();

    if json && kind == ListKind::ResourceTemplates {
        // The tool's output, exactly as a model would see it for this one server; a failure to
        // connect or list is under `failures`.
        let failure = listed.as_ref().err().map(NotListed::failure);
        let templates = listed.as_ref().map_err(|_| failure.as_ref().expect("set on failure"));
        let rendered = mcplens::tool::render_one_server(&plan.server, templates, &input).map_err(|e| Stop {
            code: e.code().as_str(),
            message: e.to_string(),
            exit: if e.code() == "invalid_argument" { exit::USAGE } else { exit::FAILED },
        })?;
        let _ = writeln!(out, "{rendered}");
        drop(out);
        if let Some(more) = more_templates(&rendered) {
            eprintln!("{more}");
        }
        return match listed {
            Err(e) => Err(e.into()),
            Ok(_) => Ok(exit::OK),
        };
    }

    let listing = match listed {
        Ok(listing) => listing,
        Err(e) => {
            if json {
                // The listing's shape, with nothing listed and the error.
                let document =
                    serde_json::json!({ "kind": kind, "server": plan.server, "items": [], "error": e.to_json() });
                let _ = writeln!(out, "{document}");
            }
            return Err(e.into());
        }
    };
    if json {
        let _ = writeln!(out, "{}", listing.to_json());
        return Ok(exit::OK);
    }
    let width = table::terminal_width();
    let text = match kind {
        ListKind::ResourceTemplates => table::templates(&listing, width),
        ListKind::Resources => table::resources(&listing, width),
    };
    let _ = out.write_all(text.as_bytes());
    drop(out);
    eprintln!("{}", summary(&listing));
    Ok(exit::OK)
}

/// What `templates --json` says on stderr when its page is not all: how many it printed of how
/// many, and the flags for the rest.
fn more_templates(rendered: &str) -> Option<String> {
    let page: serde_json::Value = serde_json::from_str(rendered).ok()?;
    let next = page.get("nextOffset")?.as_u64()?;
    let total = page.get("total")?.as_u64()?;
    let shown = page.get("resourceTemplates")?.as_array()?.len();
    Some(format!(
        "mcplens: {shown} of {total} templates printed (\"nextOffset\": {next}); the rest with --offset {next}, or up to \
         1000 at once with --limit"
    ))
}

/// The one-line account printed to stderr under a table.
fn summary(listing: &Listing) -> String {
    let d = &listing.diagnostics;
    let (one, many) = match listing.kind {
        ListKind::ResourceTemplates => ("resource template", "resource templates"),
        ListKind::Resources => ("resource", "resources"),
    };
    let mut line = match listing.support {
        Support::NoCapability => {
            format!("server \"{}\" does not declare the resources capability: nothing was asked", listing.server)
        }
        Support::MethodNotFound => format!(
            "server \"{}\" answered {} with -32601 (method not found): no resource templates",
            listing.server,
            listing.kind.method()
        ),
        Support::Listed => format!(
            "{} {} from server \"{}\" ({} {}, {} bytes)",
            d.items,
            if d.items == 1 { one } else { many },
            listing.server,
            d.pages,
            if d.pages == 1 { "page" } else { "pages" },
            d.bytes
        ),
    };
    let dropped_items: u64 = d.dropped_items.values().sum();
    let dropped_fields: u64 = d.dropped_fields.values().sum();
    if dropped_items + dropped_fields + d.sanitized_strings > 0 {
        line.push_str(&format!(
            "; {dropped_items} dropped as invalid, {dropped_fields} invalid fields dropped, {} strings sanitized \
             (run `mcplens check` for details)",
            d.sanitized_strings
        ));
    }
    line
}

async fn check_command(target: &Target, json: bool) -> Result<u8, Stop> {
    let mut plan = target.plan()?;
    let conn = match plan.connect().await {
        Ok(conn) => conn,
        Err(e) if e.code == "invalid_argument" => return Err(e.into()),
        Err(e) => {
            let e = NotListed::Connect(e);
            if json {
                let _ = std::io::stdout()
                    .write_all(check::Report::unreached(&plan.server, e.to_json()).to_json().as_bytes());
            }
            return Err(e.into());
        }
    };
    let protocol = conn.protocol_version();
    let templates = plan.traverse(&conn, ListKind::ResourceTemplates).await;
    let resources = plan.traverse(&conn, ListKind::Resources).await;
    conn.close().await;
    let report = check::Report::new(&plan.server, protocol, &plan.limits, vec![templates, resources]);
    let text = if json { report.to_json() } else { report.to_text() };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    Ok(if report.has_errors() { exit::FAILED } else { exit::OK })
}

#[cfg(test)]
mod tests {
    use super::command_name;

    #[test]
    fn a_runner_is_named_after_its_script_or_package() {
        let name = |args: &[&str]| command_name(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>());
        assert_eq!(name(&["python", "server.py"]), "server");
        assert_eq!(name(&["/usr/bin/python3.12", "-u", "/srv/notes/server.py"]), "server");
        assert_eq!(name(&["python3", "-m", "mcp_server_time"]), "mcp_server_time");
        assert_eq!(name(&["node", "--no-warnings", "dist/index.js"]), "index");
        assert_eq!(name(&["uv", "run", "weather.py"]), "weather");
        assert_eq!(name(&["npx", "-y", "@modelcontextprotocol/server-everything"]), "server-everything");
        assert_eq!(name(&["node.exe", "srv.mjs"]), "srv");
        // Not a runner, or a runner with nothing to run: the program's file name.
        assert_eq!(name(&["/opt/bin/github-mcp-server", "stdio"]), "github-mcp-server");
        assert_eq!(name(&["python3"]), "python3");
        assert_eq!(name(&["python3.x", "a.py"]), "python3.x");
    }
}
