//! The report page: one self-contained HTML document (inline CSS and SVG, no script, no network:
//! its Content-Security-Policy allows neither). Every string that came from an events file goes
//! through the core's sanitizer (controls, escape sequences, bidi and zero-width characters
//! removed) and then HTML escaping; numbers carry their raw value in `data-value` for tests.

use std::fmt::Write;

use super::files::FileInfo;
use super::sketch::{Row, Top, ACCURACY, EXACT_MAX};
use super::{Stats, OTHER_TYPES};

/// Static file, or the live page of `events serve` (which loads `live.js` from its server).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `events report`: no script at all.
    Static,
    /// `events serve`: polls the server and replaces `<main>` when the figures change; `version`
    /// is the rendering's number.
    Live {
        /// The rendering's number (`/version`).
        version: u64,
    },
}

const COLORS: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac", "#ff9da7", "#86bcb6",
    "#8cd17d", "#d4a6c8",
];
const ERROR_COLOR: &str = "#e15759";

const CSS: &str = "
:root{color-scheme:light;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d2330;background:#f6f7f9}
body{margin:0}header{background:#1d2330;color:#fff;padding:14px 24px;display:flex;gap:16px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:20px;margin:0}header .sub{color:#b9c0cc;font-size:13px}.live{background:#59a14f;color:#fff;border-radius:10px;padding:1px 8px;font-size:12px}
main{padding:16px 24px;max-width:1200px}section{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:12px 16px;margin:0 0 16px}
h2{font-size:16px;margin:0 0 8px}.cards{display:flex;flex-wrap:wrap;gap:12px}.card{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:10px 14px;min-width:120px}
.card .v{font-size:22px;font-weight:600}.card .k{font-size:12px;color:#5b6475}
table{border-collapse:collapse;width:100%;font-size:13px;margin-top:6px}th,td{padding:3px 8px;border-bottom:1px solid #eef0f3;text-align:left;vertical-align:top}
th{color:#5b6475;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.s{word-break:break-all}.note{font-size:12px;color:#5b6475;margin:6px 0 0}.legend{font-size:12px;display:flex;flex-wrap:wrap;gap:10px;margin:4px 0}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}svg{display:block;max-width:100%;height:auto}
svg text{font-size:11px;fill:#3b4252}.grid{stroke:#e8eaef}.rest td{color:#5b6475;font-style:italic}.err{color:#c0392b}
";

/// Sanitized, then HTML-escaped (text and attribute values alike).
pub fn esc(s: &str) -> String {
    let clean = mcplens::sanitize::label(s);
    let mut out = String::with_capacity(clean.len());
    for c in clean.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `1234567` → `1,234,567`.
pub fn int(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn ms(v: f64) -> String {
    format!("{v:.3}")
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

fn utc(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%d %H:%M:%SZ").to_string())
        .unwrap_or_else(|| ms.to_string())
}

fn human_span(ms: i64) -> String {
    let s = ms / 1000;
    match s {
        _ if ms < 1000 => format!("{ms} ms"),
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        3600..86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        _ => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

/// A numeric cell: formatted text, raw value in `data-value`, `data-k` naming the column.
fn num(k: &str, value: impl std::fmt::Display, text: &str) -> String {
    format!("<td class=\"n\" data-k=\"{k}\" data-value=\"{value}\">{text}</td>")
}

/// The static report of `stats`.
pub fn report(stats: &Stats, files: &[FileInfo]) -> String {
    page(&main(stats, files), files, Mode::Static)
}

/// The whole page around `main` (from [`main`]).
pub fn page(main: &str, files: &[FileInfo], mode: Mode) -> String {
    let (csp, version) = match mode {
        Mode::Static => ("default-src 'none'; style-src 'unsafe-inline'; img-src data:", String::new()),
        Mode::Live { version } => (
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; connect-src 'self'",
            format!(" data-version=\"{version}\""),
        ),
    };
    let mut h = String::with_capacity(64 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"{version}><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>mcplens events report</title><style>{CSS}</style></head><body>\
         <header><h1>mcplens events report</h1><span class=\"sub\" id=\"files-line\">{}</span>{}</header>\
         <main>",
        files_line(files),
        if mode == Mode::Static { "" } else { "<span class=\"live\" id=\"live\">live</span>" }
    );
    h.push_str(main);
    h.push_str("</main>");
    if mode != Mode::Static {
        h.push_str("<script src=\"live.js\"></script>");
    }
    h.push_str("</body></html>\n");
    h
}

fn files_line(files: &[FileInfo]) -> String {
    match files {
        [] => "no events file yet".to_owned(),
        [f] => esc(&f.path),
        [f, ..] => format!("{} and {} more files", esc(&f.path), files.len() - 1),
    }
}

/// The content of `<main>` (what the live page replaces).
pub fn main(s: &Stats, files: &[FileInfo]) -> String {
    let mut h = String::with_capacity(64 * 1024);
    overview(&mut h, s);
    over_time(&mut h, s);
    by_method(&mut h, s);
    let top = s.options.top;
    named_table(&mut h, "tools", "Most used tools", "TOOL", "tools/call", &s.tools.top(top), &|k| esc(k));
    named_table(
        &mut h,
        "resources",
        "Most used resources",
        "RESOURCE URI",
        "resources/read, subscribe and unsubscribe",
        &s.resources.top(top),
        &|k| esc(k),
    );
    named_table(
        &mut h,
        "templates",
        "Reads by resource template",
        "TEMPLATE (or scheme and authority)",
        "resources/read",
        &s.read_groups.top(top),
        &|k| match k.split_at(1) {
            ("T", t) => format!("{}<span class=\"note\"> template</span>", esc(t)),
            (_, o) => {
                format!("{}<span class=\"note\"> no known template matched: by scheme and authority</span>", esc(o))
            }
        },
    );
    let known = s.templates.list().len();
    let _ = write!(
        h,
        "<p class=\"note\" id=\"templates-known\" data-value=\"{known}\">{} known template{} (from resources/templates/list \
         events whose responses were captured, and --templates){}.</p></section>",
        int(known as u64),
        if known == 1 { "" } else { "s" },
        if s.templates.dropped > 0 { format!("; {} more not kept", int(s.templates.dropped)) } else { String::new() }
    );
    completions(&mut h, s);
    named_table(&mut h, "prompts", "Most used prompts", "PROMPT", "prompts/get", &s.prompts.top(top), &|k| esc(k));
    errors(&mut h, s);
    slowest(&mut h, s);
    clients(&mut h, s);
    sources(&mut h, s, files);
    h
}

fn overview(h: &mut String, s: &Stats) {
    let clients = s.clients.top(usize::MAX);
    let n_clients = clients.rows.len() as u64 + clients.rest_keys;
    let span = match s.span {
        Some((a, b)) => format!(
            "<div class=\"card\"><div class=\"v\" data-metric=\"span\" data-value=\"{}\">{}</div>\
             <div class=\"k\">from {} to {}</div></div>",
            b - a,
            human_span(b - a),
            utc(a),
            utc(b)
        ),
        None => "<div class=\"card\"><div class=\"v\" data-metric=\"span\" data-value=\"0\">—</div><div class=\"k\">time span</div></div>"
            .to_owned(),
    };
    let card = |metric: &str, value: String, text: String, label: &str| {
        format!("<div class=\"card\"><div class=\"v\" data-metric=\"{metric}\" data-value=\"{value}\">{text}</div><div class=\"k\">{label}</div></div>")
    };
    let _ = write!(
        h,
        "<section id=\"overview\"><h2>Overview</h2><div class=\"cards\">{}{}{}{span}{}{}</div>",
        card("events", s.events.to_string(), int(s.events), "events"),
        card("sessions", s.sessions().to_string(), int(s.sessions() as u64), "sessions"),
        card("clients", n_clients.to_string(), int(n_clients), "clients (name and version)"),
        card(
            "error-rate",
            format!("{:.6}", pct(s.errors, s.events) / 100.0),
            format!("{:.1} %", pct(s.errors, s.events)),
            &format!("error rate ({} errors)", int(s.errors))
        ),
        card("bad-lines", s.bad_lines.to_string(), int(s.bad_lines), "lines that were not events"),
    );
    if s.sessionless > 0 || s.untimed > 0 {
        let _ = write!(
            h,
            "<p class=\"note\">{} events without a session id; {} without a usable timestamp (not in the chart over time).</p>",
            int(s.sessionless),
            int(s.untimed)
        );
    }
    h.push_str("</section>");
}

fn legend(h: &mut String, items: &[(String, &str)]) {
    h.push_str("<div class=\"legend\">");
    for (name, color) in items {
        let _ = write!(h, "<span><i style=\"background:{color}\"></i>{}</span>", esc(name));
    }
    h.push_str("</div>");
}

fn over_time(h: &mut String, s: &Stats) {
    h.push_str("<section id=\"over-time\"><h2>Operations over time, per method</h2>");
    let names: Vec<(String, &str)> =
        s.types.iter().enumerate().map(|(i, (k, _))| (k.clone(), COLORS[i % COLORS.len()])).collect();
    let mut items = names.clone();
    items.push(("errors".to_owned(), ERROR_COLOR));
    legend(h, &items);
    let (w, ht, left, bottom) = (960.0, 240.0, 48.0, 22.0);
    let _ = write!(
        h,
        "<svg data-chart=\"over-time\" viewBox=\"0 0 {w} {ht}\" width=\"{w}\" height=\"{ht}\" role=\"img\" \
         aria-label=\"Operations per {} bucket, stacked by method\">",
        human_span(s.bucket_ms)
    );
    let (Some((&lo, _)), Some((&hi, _))) = (s.series.first_key_value(), s.series.last_key_value()) else {
        h.push_str("<text x=\"20\" y=\"30\">no timed events</text></svg></section>");
        return;
    };
    let n = (hi - lo + 1) as f64;
    let max = s.series.values().map(|v| v.iter().sum::<u64>()).max().unwrap_or(1).max(1) as f64;
    let plot_w = w - left - 8.0;
    let plot_h = ht - bottom - 8.0;
    let bw = plot_w / n;
    for frac in [0.0, 1.0] {
        let y = 8.0 + plot_h * (1.0 - frac);
        let _ = write!(
            h,
            "<line class=\"grid\" x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            w - 8.0,
            left - 4.0,
            y + 4.0,
            int((max * frac).round() as u64)
        );
    }
    for (&b, counts) in &s.series {
        let x = left + (b - lo) as f64 * bw;
        let mut y = 8.0 + plot_h;
        for (i, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let bh = c as f64 / max * plot_h;
            y -= bh;
            let _ = write!(
                h,
                "<rect x=\"{x:.2}\" y=\"{y:.2}\" width=\"{:.2}\" height=\"{bh:.2}\" fill=\"{}\"><title>{}: {} {}</title></rect>",
                (bw - 1.0).max(0.5),
                COLORS[i % COLORS.len()],
                utc(b * s.bucket_ms),
                int(c),
                esc(&s.types[i].0)
            );
        }
    }
    for (&b, &e) in &s.error_series {
        let x = left + (b - lo) as f64 * bw + bw / 2.0;
        let y = 8.0 + plot_h * (1.0 - e as f64 / max);
        let _ = write!(
            h,
            "<circle cx=\"{x:.2}\" cy=\"{y:.2}\" r=\"3\" fill=\"{ERROR_COLOR}\"><title>{}: {} errors</title></circle>",
            utc(b * s.bucket_ms),
            int(e)
        );
    }
    for (i, b) in [lo, lo + (hi - lo) / 2, hi].into_iter().enumerate() {
        let x = left + (b - lo) as f64 * bw + if i == 2 { bw } else { 0.0 };
        let anchor = ["start", "middle", "end"][i];
        let _ =
            write!(h, "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>", ht - 6.0, utc(b * s.bucket_ms));
    }
    let _ = write!(
        h,
        "</svg><p class=\"note\">Buckets of {}, UTC; a red dot counts the errors of its bucket.</p></section>",
        human_span(s.bucket_ms)
    );
}

/// A horizontal bar chart: (label HTML, value, title text).
fn bars(h: &mut String, id: &str, series: &[(String, f64, String)], colors: &[&str]) {
    let row_h = 18.0;
    let (w, label_w) = (960.0, 300.0);
    let ht = (series.len().max(1) as f64) * row_h + 8.0;
    let _ = write!(h, "<svg data-chart=\"{id}\" viewBox=\"0 0 {w} {ht}\" width=\"{w}\" height=\"{ht}\" role=\"img\">");
    if series.is_empty() {
        h.push_str("<text x=\"4\" y=\"14\">none</text></svg>");
        return;
    }
    let max = series.iter().map(|s| s.1).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    for (i, (label, v, title)) in series.iter().enumerate() {
        let y = 4.0 + i as f64 * row_h;
        let bw = (v / max * (w - label_w - 90.0)).max(1.0);
        let _ = write!(
            h,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>\
             <rect x=\"{label_w}\" y=\"{y:.1}\" width=\"{bw:.2}\" height=\"{:.1}\" fill=\"{}\"><title>{title}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\">{title}</text>",
            label_w - 6.0,
            y + 12.0,
            row_h - 4.0,
            colors[i % colors.len()],
            label_w + bw + 4.0,
            y + 12.0
        );
    }
    h.push_str("</svg>");
}

/// A label cut for a chart's axis (the table shows it whole).
fn short(s: &str) -> String {
    let clean = mcplens::sanitize::label(s);
    if clean.chars().count() > 44 {
        esc(&format!("{}…", clean.chars().take(43).collect::<String>()))
    } else {
        esc(&clean)
    }
}

fn by_method(h: &mut String, s: &Stats) {
    h.push_str("<section id=\"methods\"><h2>Latency per method</h2>");
    let figures = s.type_figures();
    let mut series = Vec::new();
    for (k, _, _, p50, p95, p99) in &figures {
        for (q, v) in [("p50", p50), ("p95", p95), ("p99", p99)] {
            series.push((format!("{} {q}", short(k)), *v, format!("{} ms", ms(*v))));
        }
    }
    bars(h, "latency", &series, &["#a0cbe8", "#4e79a7", "#2a4a6e"]);
    h.push_str(
        "<table><thead><tr><th>METHOD</th><th class=\"n\">COUNT</th><th class=\"n\">ERRORS</th><th class=\"n\">ERROR RATE</th>\
         <th class=\"n\">P50 MS</th><th class=\"n\">P95 MS</th><th class=\"n\">P99 MS</th></tr></thead><tbody>",
    );
    for (k, n, e, p50, p95, p99) in &figures {
        let _ = write!(
            h,
            "<tr data-key=\"{}\"><td>{}</td>{}{}{}{}{}{}</tr>",
            esc(k),
            if k == OTHER_TYPES { format!("<i>{}</i>", esc(k)) } else { esc(k) },
            num("count", n, &int(*n)),
            num("errors", e, &int(*e)),
            num("error-rate", format!("{:.6}", pct(*e, *n) / 100.0), &format!("{:.1} %", pct(*e, *n))),
            num("p50", p50, &ms(*p50)),
            num("p95", p95, &ms(*p95)),
            num("p99", p99, &ms(*p99)),
        );
    }
    h.push_str(
        "</tbody></table><p class=\"note\">Exact nearest-rank percentiles (the ⌈q·n⌉-th smallest duration), as \
         <code>mcplens events summary</code> computes them.</p></section>",
    );
}

fn exactness_note(top: &Top) -> String {
    let mut note = format!(
        "Counts exact. Percentiles are nearest rank: exact for a row of at most {EXACT_MAX} events; \
         marked ≈ for a larger one, within ±{:.0} % of the exact value (logarithmic buckets).",
        ACCURACY * 100.0
    );
    if top.evictions > 0 {
        let _ = write!(
            note,
            " More than {} distinct keys were seen: a row marked † may have up to the number shown of earlier \
             events counted in “all others” (every key seen more often than events ÷ {} has a row).",
            int(top.cap as u64),
            int(top.cap as u64)
        );
    }
    note
}

/// The mark of a row that may miss earlier events (see [`exactness_note`]).
fn dagger(r: &Row) -> String {
    if r.before > 0 {
        format!(" <span class=\"note\">† up to {} more</span>", int(r.before))
    } else {
        String::new()
    }
}

fn row_cells(r: &Row) -> String {
    let mut cells = format!("{}{}", num("count", r.count, &int(r.count)), num("errors", r.errors, &int(r.errors)));
    for (k, q) in [("p50", 0.50), ("p95", 0.95), ("p99", 0.99)] {
        let cell = match r.durations.percentile(q) {
            Some((v, true)) => num(k, v, &ms(v)),
            Some((v, false)) => {
                format!("<td class=\"n\" data-k=\"{k}\" data-value=\"{v}\" data-approx=\"1\">≈ {}</td>", ms(v))
            }
            None => "<td class=\"n\">—</td>".to_owned(),
        };
        cells.push_str(&cell);
    }
    cells
}

fn named_table(
    h: &mut String,
    id: &str,
    title: &str,
    column: &str,
    from: &str,
    top: &Top,
    label: &dyn Fn(&str) -> String,
) {
    let _ = write!(h, "<section id=\"{id}\"><h2>{title}</h2>");
    let series: Vec<(String, f64, String)> = top
        .rows
        .iter()
        .map(|(k, r)| (short(k.get(usize::from(id == "templates")..).unwrap_or(k)), r.count as f64, int(r.count)))
        .collect();
    bars(h, id, &series, &COLORS);
    let _ = write!(
        h,
        "<table><thead><tr><th>{column}</th><th class=\"n\">COUNT</th><th class=\"n\">ERRORS</th><th class=\"n\">P50 MS</th>\
         <th class=\"n\">P95 MS</th><th class=\"n\">P99 MS</th></tr></thead><tbody>"
    );
    for (k, r) in &top.rows {
        let dagger = dagger(r);
        let _ = write!(h, "<tr data-key=\"{}\"><td class=\"s\">{}{dagger}</td>{}</tr>", esc(k), label(k), row_cells(r));
    }
    if top.rest.count > 0 {
        let _ = write!(
            h,
            "<tr class=\"rest\" data-key=\"(rest)\"><td>all others ({} more)</td>{}</tr>",
            int(top.rest_keys),
            row_cells(&top.rest)
        );
    }
    if top.rows.is_empty() {
        let _ = write!(h, "<tr><td colspan=\"6\">no {from} events</td></tr>");
    }
    let _ = write!(h, "</tbody></table><p class=\"note\">From {from} events. {}</p>", exactness_note(top));
    if id != "templates" {
        h.push_str("</section>");
    }
}

fn errors(h: &mut String, s: &Stats) {
    let top = s.error_kinds.top(s.options.top);
    h.push_str("<section id=\"errors\"><h2>Errors by code and message</h2>");
    let series: Vec<(String, f64, String)> = top
        .rows
        .iter()
        .map(|(k, r)| {
            let (code, msg) = k.split_once('\0').unwrap_or((k, ""));
            (short(&format!("{code} {msg}")), r.count as f64, int(r.count))
        })
        .collect();
    bars(h, "errors", &series, &[ERROR_COLOR]);
    h.push_str("<table><thead><tr><th>CODE</th><th>MESSAGE</th><th class=\"n\">COUNT</th></tr></thead><tbody>");
    for (k, r) in &top.rows {
        let (code, msg) = k.split_once('\0').unwrap_or((k, ""));
        let dagger = dagger(r);
        let _ = write!(
            h,
            "<tr data-key=\"{}\"><td>{}</td><td class=\"s\">{}{dagger}</td>{}</tr>",
            esc(k),
            if code.is_empty() { "—".to_owned() } else { esc(code) },
            esc(msg),
            num("count", r.count, &int(r.count))
        );
    }
    if top.rest.count > 0 {
        let _ = write!(
            h,
            "<tr class=\"rest\" data-key=\"(rest)\"><td colspan=\"2\">all others ({} more)</td>{}</tr>",
            int(top.rest_keys),
            num("count", top.rest.count, &int(top.rest.count))
        );
    }
    if top.rows.is_empty() {
        h.push_str("<tr><td colspan=\"3\">no errors</td></tr>");
    }
    h.push_str("</tbody></table><p class=\"note\">The code is the JSON-RPC error code, or <code>tool_error</code> for a tool result with isError.</p></section>");
}

fn slowest(h: &mut String, s: &Stats) {
    h.push_str(
        "<section id=\"slowest\"><h2>Slowest operations</h2><table><thead><tr><th class=\"n\">MS</th><th>METHOD</th>\
         <th>NAME OR URI</th><th>WHEN</th><th>SESSION</th><th>EVENT</th></tr></thead><tbody>",
    );
    for e in s.slowest_sorted() {
        let _ = write!(
            h,
            "<tr>{}<td>{}{}</td><td class=\"s\">{}</td><td>{}</td><td class=\"s\">{}</td><td class=\"s\">{}</td></tr>",
            num("ms", e.duration_ms, &ms(e.duration_ms)),
            esc(&e.kind),
            if e.is_error { " <span class=\"err\">error</span>" } else { "" },
            e.name.as_deref().map_or_else(|| "—".to_owned(), esc),
            e.timestamp.as_deref().map_or_else(|| "—".to_owned(), esc),
            e.session.as_deref().map_or_else(|| "—".to_owned(), esc),
            e.id.as_deref().map_or_else(|| "—".to_owned(), esc),
        );
    }
    if s.slowest.is_empty() {
        h.push_str("<tr><td colspan=\"6\">no events</td></tr>");
    }
    h.push_str("</tbody></table></section>");
}

/// `completion/complete` by resource template: how often the model (or user) completed its
/// variables, and how many of those completions a read of the same template followed in the session.
fn completions(h: &mut String, s: &Stats) {
    let top = s.completions.top(s.options.top);
    h.push_str("<section id=\"completions\"><h2>Completions by resource template</h2>");
    if top.rows.is_empty() {
        h.push_str("<p class=\"note\">No completion/complete of a resource template.</p></section>");
        return;
    }
    h.push_str(
        "<table><thead><tr><th>TEMPLATE</th><th class=\"n\">COMPLETIONS</th><th class=\"n\">THEN READ</th>\
         <th class=\"n\">ERRORS</th></tr></thead><tbody>",
    );
    for (k, r) in &top.rows {
        let _ = write!(
            h,
            "<tr data-key=\"{}\"><td class=\"s\">{}</td>{}{}{}</tr>",
            esc(k),
            esc(k),
            num("count", r.count, &int(r.count)),
            num("read", r.extra, &int(r.extra)),
            num("errors", r.errors, &int(r.errors)),
        );
    }
    if top.rest.count > 0 {
        let _ = write!(
            h,
            "<tr class=\"rest\" data-key=\"(rest)\"><td>all others ({} more)</td>{}{}{}</tr>",
            int(top.rest_keys),
            num("count", top.rest.count, &int(top.rest.count)),
            num("read", top.rest.extra, &int(top.rest.extra)),
            num("errors", top.rest.errors, &int(top.rest.errors)),
        );
    }
    h.push_str(
        "</tbody></table><p class=\"note\">THEN READ: how often a successful read of the template followed its \
         completion in the same session (the completions of one template before one read count once).</p></section>",
    );
}

fn clients(h: &mut String, s: &Stats) {
    let top = s.clients.top(s.options.top);
    h.push_str("<section id=\"clients\"><h2>Clients by name and version</h2>");
    let series: Vec<(String, f64, String)> = top
        .rows
        .iter()
        .map(|(k, r)| {
            let (name, version) = k.split_once('\0').unwrap_or((k, ""));
            (short(&format!("{name} {version}")), r.count as f64, format!("{} events", int(r.count)))
        })
        .collect();
    bars(h, "clients", &series, &COLORS);
    h.push_str(
        "<table><thead><tr><th>CLIENT</th><th>VERSION</th><th class=\"n\">SESSIONS</th><th class=\"n\">EVENTS</th>\
         <th class=\"n\">ERRORS</th></tr></thead><tbody>",
    );
    for (k, r) in &top.rows {
        let (name, version) = k.split_once('\0').unwrap_or((k, ""));
        let _ = write!(
            h,
            "<tr data-key=\"{}\"><td class=\"s\">{}</td><td class=\"s\">{}</td>{}{}{}</tr>",
            esc(k),
            esc(name),
            esc(version),
            num("sessions", r.extra, &int(r.extra)),
            num("count", r.count, &int(r.count)),
            num("errors", r.errors, &int(r.errors)),
        );
    }
    if top.rest.count > 0 {
        let _ = write!(
            h,
            "<tr class=\"rest\" data-key=\"(rest)\"><td colspan=\"2\">all others ({} more)</td>{}{}{}</tr>",
            int(top.rest_keys),
            num("sessions", top.rest.extra, &int(top.rest.extra)),
            num("count", top.rest.count, &int(top.rest.count)),
            num("errors", top.rest.errors, &int(top.rest.errors)),
        );
    }
    h.push_str(
        "</tbody></table><p class=\"note\">A session counts for the client of its first event. Counts exact unless marked.</p></section>",
    );
}

fn sources(h: &mut String, s: &Stats, files: &[FileInfo]) {
    h.push_str("<section id=\"sources\"><h2>Files read</h2><table><thead><tr><th>FILE</th><th class=\"n\">BYTES</th></tr></thead><tbody>");
    for f in files {
        let _ = write!(h, "<tr><td class=\"s\">{}</td>{}</tr>", esc(&f.path), num("bytes", f.bytes, &int(f.bytes)));
    }
    h.push_str("</tbody></table>");
    let _ = write!(
        h,
        "<p class=\"note\" id=\"bad-lines\" data-value=\"{}\">{} line{} that were not events (skipped, counted)",
        s.bad_lines,
        int(s.bad_lines),
        if s.bad_lines == 1 { "" } else { "s" }
    );
    if s.bad_listed.is_empty() {
        h.push_str(".</p>");
    } else {
        h.push_str(":</p><table><tbody>");
        for b in &s.bad_listed {
            let _ = write!(h, "<tr><td class=\"s\">{}:{}</td><td>{}</td></tr>", esc(&b.file), b.line, esc(&b.reason));
        }
        if s.bad_lines > s.bad_listed.len() as u64 {
            let _ =
                write!(h, "<tr><td colspan=\"2\">and {} more</td></tr>", int(s.bad_lines - s.bad_listed.len() as u64));
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup_and_no_bidi() {
        let s = esc("<script>alert(1)</script>\"'&\u{202e}x\u{200b}");
        assert_eq!(s, "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;x");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(
            (int(0), int(999), int(1000), int(1_234_567)),
            ("0".into(), "999".into(), "1,000".into(), "1,234,567".into())
        );
        assert_eq!(human_span(3_599_000), "59 min 59 s");
        assert_eq!(utc(0), "1970-01-01 00:00:00Z");
    }
}
