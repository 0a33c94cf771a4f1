//! `mcplens check`: what clients will drop or refuse, read from the core's [`Diagnostics`] and
//! errors. Diagnostics carry counts only (no URI, name, cursor or description), so the report
//! never echoes anything the server sent.

use std::time::Duration;

use mcplens::discovery::{Diagnostics, Limits, ListKind, Support};
use serde::Serialize;

use crate::outcome::Traversal;

/// A bound used above this share (in percent) is reported as "near".
const NEAR_PERCENT: u128 = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Clients drop or refuse something: `check` exits 1.
    Error,
    /// Clients change something, or a bound is close.
    Warning,
    /// Worth knowing; nothing is lost.
    Info,
}

impl Severity {
    fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// A stable code: an error code of `docs/errors.md`, a drop reason (`invalid_uri_template`,
    /// `invalid_uri`), `dropped_field`, `sanitized_strings`, `repeated_cursors`, `ignored_keys`, `near_page_limit`,
    /// `near_item_limit`, `near_byte_limit`, `near_deadline`, `no_capability`, `method_not_found`.
    pub code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    pub message: String,
}

impl Finding {
    fn new(severity: Severity, code: impl Into<String>, count: Option<u64>, message: String) -> Finding {
        Finding { severity, code: code.into(), count, message }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListReport {
    /// The JSON-RPC method.
    pub list: &'static str,
    /// `"ok"` or `"failed"`.
    pub outcome: &'static str,
    pub requests: u32,
    pub elapsed_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Diagnostics>,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub server: String,
    /// The protocol revision the session spoke (absent when the server was not reached).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    pub ok: bool,
    pub lists: Vec<ListReport>,
    /// Why nothing was listed: the server could not be reached (`{code, message, stderrTail?}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<serde_json::Value>,
}

impl Report {
    pub fn new(server: &str, protocol_version: Option<String>, limits: &Limits, traversals: Vec<Traversal>) -> Report {
        let lists: Vec<ListReport> = traversals.into_iter().map(|t| list_report(limits, t)).collect();
        let ok = !lists.iter().flat_map(|l| &l.findings).any(|f| f.severity == Severity::Error);
        Report { server: server.to_owned(), protocol_version, ok, lists, error: None }
    }

    /// The report of a server that could not be reached: no lists, the `error`.
    pub fn unreached(server: &str, error: serde_json::Value) -> Report {
        Report { server: server.to_owned(), protocol_version: None, ok: false, lists: Vec::new(), error: Some(error) }
    }

    pub fn has_errors(&self) -> bool {
        !self.ok
    }

    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a report serializes");
        text.push('\n');
        text
    }

    pub fn to_text(&self) -> String {
        let mut out = format!("mcplens check: server \"{}\"", self.server);
        if let Some(version) = &self.protocol_version {
            out.push_str(&format!(" (protocol {version})"));
        }
        out.push('\n');
        let code_width = self.lists.iter().flat_map(|l| &l.findings).map(|f| code_cell(f).len()).max().unwrap_or(0);
        for list in &self.lists {
            out.push('\n');
            out.push_str(&headline(list));
            out.push('\n');
            for f in &list.findings {
                out.push_str(&format!("  {:<8} {:<code_width$}  {}\n", f.severity.label(), code_cell(f), f.message));
            }
        }
        let count = |s: Severity| self.lists.iter().flat_map(|l| &l.findings).filter(|f| f.severity == s).count();
        let (errors, warnings, infos) = (count(Severity::Error), count(Severity::Warning), count(Severity::Info));
        out.push('\n');
        if errors > 0 {
            out.push_str(&format!(
                "{} — clients will drop or refuse part of what this server lists.\n",
                tally(errors, warnings, infos)
            ));
        } else if warnings > 0 {
            out.push_str(&format!("{} — nothing is dropped, but see the warnings.\n", tally(errors, warnings, infos)));
        } else {
            out.push_str("No problems: clients will list everything this server offers.\n");
        }
        out
    }
}

fn code_cell(f: &Finding) -> String {
    match f.count {
        Some(n) => format!("{} ×{n}", f.code),
        None => f.code.clone(),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn tally(errors: usize, warnings: usize, infos: usize) -> String {
    let mut parts = vec![plural(errors as u64, "error", "errors"), plural(warnings as u64, "warning", "warnings")];
    if infos > 0 {
        parts.push(plural(infos as u64, "note", "notes"));
    }
    parts.join(", ")
}

fn headline(list: &ListReport) -> String {
    let secs = list.elapsed_ms as f64 / 1000.0;
    match &list.diagnostics {
        Some(d) => {
            let (one, many) = if list.list == ListKind::Resources.method() {
                ("resource", "resources")
            } else {
                ("template", "templates")
            };
            format!(
                "{}: ok — {} kept, {}, {}, {} bytes, {secs:.2} s",
                list.list,
                plural(d.items as u64, one, many),
                plural(u64::from(d.pages), "page", "pages"),
                plural(u64::from(d.requests), "request", "requests"),
                d.bytes
            )
        }
        None => format!(
            "{}: FAILED after {}, {secs:.2} s",
            list.list,
            plural(u64::from(list.requests), "request", "requests")
        ),
    }
}

fn list_report(limits: &Limits, t: Traversal) -> ListReport {
    let method = t.kind.method();
    let elapsed_ms = u64::try_from(t.elapsed.as_millis()).unwrap_or(u64::MAX);
    match t.result {
        Err(e) => {
            let code = e.code().as_str();
            let finding = Finding::new(Severity::Error, code, None, format!("{e} — {}", consequence(code)));
            ListReport {
                list: method,
                outcome: "failed",
                requests: t.requests,
                elapsed_ms,
                diagnostics: None,
                findings: vec![finding],
            }
        }
        Ok(listing) => {
            let mut findings = Vec::new();
            match listing.support {
                Support::Listed => {}
                Support::NoCapability => findings.push(Finding::new(
                    Severity::Info,
                    "no_capability",
                    None,
                    format!("the server does not declare the resources capability: clients never send {method}"),
                )),
                Support::MethodNotFound => findings.push(Finding::new(
                    Severity::Info,
                    "method_not_found",
                    None,
                    format!(
                        "{method} answered -32601 (method not found): clients treat the server as having no templates"
                    ),
                )),
            }
            diagnostics_findings(t.kind, &listing.diagnostics, &mut findings);
            near_bounds(limits, &listing.diagnostics, t.elapsed, &mut findings);
            ListReport {
                list: method,
                outcome: "ok",
                requests: t.requests,
                elapsed_ms,
                diagnostics: Some(listing.diagnostics),
                findings,
            }
        }
    }
}

/// What a client does with a failed traversal, by error code.
fn consequence(code: &str) -> &'static str {
    match code {
        "repeated_cursor" => "clients stop paging and keep nothing from this list",
        "page_limit" | "item_limit" | "byte_limit" => {
            "clients stop at the bound and keep nothing from this list (raise it with the --max-… flags to measure)"
        }
        "deadline" => "clients give up and keep nothing from this list (--deadline-ms sets the bound)",
        "malformed_result" => "clients refuse the whole list, not just the bad page",
        "server_error" => "clients keep nothing from this list",
        "transport_error" => "the connection failed; clients keep nothing from this list",
        _ => "clients keep nothing from this list",
    }
}

fn diagnostics_findings(kind: ListKind, d: &Diagnostics, findings: &mut Vec<Finding>) {
    let (one, many) = match kind {
        ListKind::ResourceTemplates => ("template", "templates"),
        ListKind::Resources => ("resource", "resources"),
    };
    for (&reason, &n) in &d.dropped_items {
        let why = match reason {
            "invalid_uri_template" => {
                "not a valid RFC 6570 URI template (levels 1–4), over 2,048 characters, or holding controls, \
                 whitespace, bidi or zero-width characters"
            }
            "invalid_uri" => {
                "the URI is over 2,048 characters or holds controls, whitespace, bidi or zero-width characters"
            }
            _ => "refused by the core's validation",
        };
        findings.push(Finding::new(
            Severity::Error,
            reason,
            Some(n),
            format!("{n} {} dropped entirely: {why}", if n == 1 { one } else { many }),
        ));
    }
    for (&field, &n) in &d.dropped_fields {
        let message = if matches!(field, "ttlMs" | "cacheScope") {
            format!("{field}: invalid value ignored on {n} {}", if n == 1 { "page" } else { "pages" })
        } else {
            format!(
                "{field}: invalid value dropped from {n} {} (the {one} is kept without it)",
                if n == 1 { one } else { many }
            )
        };
        findings.push(Finding::new(Severity::Error, "dropped_field", Some(n), message));
    }
    if d.sanitized_strings > 0 {
        let n = d.sanitized_strings;
        findings.push(Finding::new(
            Severity::Warning,
            "sanitized_strings",
            Some(n),
            format!(
                "{n} string(s) changed by sanitizing (controls, escape sequences, bidi or zero-width characters, \
                 noncharacters, or over 2,048 characters): clients show the cleaned text"
            ),
        ));
    }
    if d.repeated_cursors > 0 {
        let n = d.repeated_cursors;
        findings.push(Finding::new(
            Severity::Warning,
            "repeated_cursors",
            Some(u64::from(n)),
            format!(
                "{n} cursor(s) sent again although already sent (followed on protocol 2026-07-28): clients on \
                 earlier revisions stop paging and keep nothing from this list"
            ),
        ));
    }
    if d.ignored_keys > 0 {
        let n = d.ignored_keys;
        findings.push(Finding::new(
            Severity::Info,
            "ignored_keys",
            Some(n),
            format!("{n} item key(s) clients do not keep (_meta, icons, unknown keys)"),
        ));
    }
}

fn near_bounds(limits: &Limits, d: &Diagnostics, elapsed: Duration, findings: &mut Vec<Finding>) {
    let near = |used: u128, max: u128| max > 0 && used * 100 > max * NEAR_PERCENT;
    // Items count against the bound as the server's array lengths: kept + dropped.
    let seen_items = d.items as u64 + d.dropped_items.values().sum::<u64>();
    let checks = [
        ("near_page_limit", u128::from(d.requests), u128::from(limits.max_pages), "requests", "--max-pages"),
        ("near_item_limit", u128::from(seen_items), limits.max_items as u128, "items", "--max-items"),
        ("near_byte_limit", d.bytes as u128, limits.max_bytes as u128, "bytes of projected metadata", "--max-bytes"),
        ("near_deadline", elapsed.as_millis(), limits.deadline.as_millis(), "ms", "--deadline-ms"),
    ];
    for (code, used, max, unit, flag) in checks {
        if near(used, max) {
            findings.push(Finding::new(
                Severity::Warning,
                code,
                None,
                format!(
                    "{used} of {max} {unit} ({}%, {flag}): a little more and clients refuse the whole list",
                    used * 100 / max
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use mcplens::discovery::{Diagnostics, ListKind};

    use super::{diagnostics_findings, Severity};

    #[test]
    fn followed_repeats_warn_about_earlier_revisions() {
        let d = Diagnostics { repeated_cursors: 2, ..Diagnostics::default() };
        let mut findings = Vec::new();
        diagnostics_findings(ListKind::Resources, &d, &mut findings);
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!((f.severity, f.code.as_str(), f.count), (Severity::Warning, "repeated_cursors", Some(2)));
        assert!(f.message.contains("earlier revisions stop paging"), "{}", f.message);
    }
}
