//! `mcplens events report|serve`: one pass over tracking JSONL files into bounded figures, drawn
//! as one self-contained HTML page ([`html`]) or served live ([`crate::serve`]).
//!
//! Memory: the per-method percentiles are exact (nearest rank, as `events summary`), so every
//! event's duration is kept (8 bytes each), and each distinct session id as a 64-bit hash. Every
//! other table keeps at most [`Options::max_keys`] keys ([`sketch::TopTable`]) with percentiles
//! within ±1 % ([`sketch::Sketch`]); the chart of operations over time at most [`MAX_BUCKETS`]
//! buckets. Lines are read one at a time into one reused buffer.

pub mod files;
pub mod html;
pub mod sketch;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use serde::Deserialize;

use sketch::TopTable;

/// Buckets of the operations-over-time chart, at most.
pub const MAX_BUCKETS: usize = 120;
/// Distinct event types with their own row (and exact percentiles); more go to `(other types)`.
pub const MAX_TYPES: usize = 64;
/// Templates kept from `resources/templates/list` events and `--templates`.
pub const MAX_TEMPLATES: usize = 10_000;
/// The slowest operations listed.
pub const SLOWEST: usize = 20;
/// Bad lines whose place is listed (all are counted).
pub const BAD_LINES_LISTED: usize = 10;
/// The row of event types past [`MAX_TYPES`].
pub const OTHER_TYPES: &str = "(other types)";

/// Bucket widths of the time chart, in ms: each divides the next, so buckets merge exactly.
const WIDTHS_MS: [i64; 13] = [
    1_000,
    5_000,
    10_000,
    30_000,
    60_000,
    300_000,
    600_000,
    1_800_000,
    3_600_000,
    21_600_000,
    43_200_000,
    86_400_000,
    604_800_000,
];

/// How the report is made.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows shown per table (the rest summed in one row).
    pub top: usize,
    /// Keys kept per capped table (see [`sketch::TopTable`]).
    pub max_keys: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options { top: 20, max_keys: 1_000 }
    }
}

#[derive(Deserialize)]
#[serde(transparent)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow, default)]
    name: Option<Str<'a>>,
    #[serde(borrow, default)]
    version: Option<Str<'a>>,
}

#[derive(Deserialize)]
struct ErrorPart<'a> {
    #[serde(default)]
    code: Option<i64>,
    #[serde(borrow, default, rename = "type")]
    kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    message: Option<Str<'a>>,
}

/// One event, as far as the report needs it (docs/events.md).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    #[serde(borrow, rename = "type")]
    kind: Str<'a>,
    duration_ms: f64,
    #[serde(default)]
    is_error: bool,
    #[serde(borrow, default)]
    id: Option<Str<'a>>,
    #[serde(borrow, default)]
    resource_name: Option<Str<'a>>,
    #[serde(borrow, default)]
    timestamp: Option<Str<'a>>,
    #[serde(borrow, default)]
    session_id: Option<Str<'a>>,
    #[serde(borrow, default)]
    client: Option<Named<'a>>,
    #[serde(borrow, default)]
    error: Option<ErrorPart<'a>>,
}

/// The part of a `resources/templates/list` event that names its templates.
#[derive(Deserialize)]
struct TemplatesLine {
    #[serde(default)]
    response: Option<TemplatesResponse>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TemplatesResponse {
    #[serde(default)]
    resource_templates: Vec<TemplateItem>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TemplateItem {
    uri_template: Option<String>,
}

/// The templates named by a `resources/templates/list` event line (none for other lines, or
/// when responses were not captured).
pub fn templates_in(line: &[u8]) -> Vec<String> {
    serde_json::from_slice::<TemplatesLine>(line)
        .ok()
        .and_then(|l| l.response)
        .map(|r| r.resource_templates.into_iter().filter_map(|t| t.uri_template).collect())
        .unwrap_or_default()
}

/// Which group a `resources/read` URI belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadGroup<'t> {
    /// The first known template (most literal characters first) the URI matches.
    Template(&'t str),
    /// No known template matches (or none is known): the URI's scheme and authority.
    Origin(String),
}

/// The resource template `uri` was made from, among `templates` (sorted most specific first by
/// [`Templates`]), else the URI's scheme and authority.
pub fn read_group<'t>(templates: &'t [String], uri: &str) -> ReadGroup<'t> {
    match templates.iter().find(|t| template_matches(t, uri)) {
        Some(t) => ReadGroup::Template(t),
        None => ReadGroup::Origin(origin(uri)),
    }
}

/// Whether the URI `uri` is an expansion of the RFC 6570 template `template` (the core's
/// `template::matches`). No match, or an error (an invalid template, the match step budget): false,
/// and the read falls back to its scheme and authority.
fn template_matches(template: &str, uri: &str) -> bool {
    matches!(mcplens::template::matches(template, uri), Ok(Some(_)))
}

/// `scheme://authority` of a URI (userinfo left out), `scheme:` for one without an authority,
/// or `(no scheme)`.
pub fn origin(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once(':') else { return "(no scheme)".to_owned() };
    let valid = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid {
        return "(no scheme)".to_owned();
    }
    match rest.strip_prefix("//") {
        Some(after) => {
            let authority = after.split(['/', '?', '#']).next().unwrap_or("");
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}")
        }
        None => format!("{scheme}:"),
    }
}

/// The known templates: deduplicated, at most [`MAX_TEMPLATES`], most literal characters first.
#[derive(Debug, Clone, Default)]
pub struct Templates {
    list: Vec<String>,
    seen: HashSet<String>,
    /// Templates past the cap (counted, not kept).
    pub dropped: u64,
}

impl Templates {
    /// Adds templates; returns whether any was new.
    pub fn extend(&mut self, templates: impl IntoIterator<Item = String>) -> bool {
        let mut changed = false;
        for t in templates {
            if self.seen.contains(&t) {
                continue;
            }
            if self.list.len() >= MAX_TEMPLATES {
                self.dropped += 1;
                continue;
            }
            self.seen.insert(t.clone());
            self.list.push(t);
            changed = true;
        }
        if changed {
            let literal = |t: &str| {
                let mut depth = 0usize;
                t.chars()
                    .filter(|&c| {
                        match c {
                            '{' => depth += 1,
                            '}' => depth = depth.saturating_sub(1),
                            _ => return depth == 0,
                        }
                        false
                    })
                    .count()
            };
            self.list.sort_by(|a, b| literal(b).cmp(&literal(a)).then_with(|| a.cmp(b)));
        }
        changed
    }

    /// The templates, most specific first.
    pub fn list(&self) -> &[String] {
        &self.list
    }
}

/// Exact figures of one event type.
#[derive(Debug, Clone, Default)]
pub struct TypeStats {
    /// Every duration (for exact nearest-rank percentiles).
    pub durations: Vec<f64>,
    /// Errors.
    pub errors: u64,
}

/// One of the slowest operations.
#[derive(Debug, Clone)]
pub struct Slow {
    /// `durationMs`.
    pub duration_ms: f64,
    /// Event type.
    pub kind: String,
    /// `resourceName`.
    pub name: Option<String>,
    /// `timestamp`.
    pub timestamp: Option<String>,
    /// `sessionId`.
    pub session: Option<String>,
    /// `id`.
    pub id: Option<String>,
    /// `isError`.
    pub is_error: bool,
    seq: u64,
}

/// A line that was not an event.
#[derive(Debug, Clone)]
pub struct BadLine {
    /// The file (as given or found).
    pub file: String,
    /// 1-based line number.
    pub line: u64,
    /// Why: `not JSON`, `not UTF-8`, `not an event (…)`.
    pub reason: String,
}

/// Everything the report shows, accumulated one line at a time.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Options the stats were made with.
    pub options: Options,
    /// Events read.
    pub events: u64,
    /// Events with `isError`.
    pub errors: u64,
    /// Lines that were not events.
    pub bad_lines: u64,
    /// The first [`BAD_LINES_LISTED`] of them.
    pub bad_listed: Vec<BadLine>,
    /// Distinct `sessionId` (64-bit hashes).
    sessions: HashSet<u64>,
    /// Events without a `sessionId`.
    pub sessionless: u64,
    /// First and last timestamp (epoch ms).
    pub span: Option<(i64, i64)>,
    /// Events whose `timestamp` is absent or not RFC 3339.
    pub untimed: u64,
    type_index: HashMap<String, usize>,
    /// Per event type, in order of first appearance (then [`OTHER_TYPES`]).
    pub types: Vec<(String, TypeStats)>,
    /// Bucket width (ms) of `series`.
    pub bucket_ms: i64,
    width_step: usize,
    /// Bucket (start / `bucket_ms`) → events per type index.
    pub series: BTreeMap<i64, Vec<u64>>,
    /// Bucket → errors.
    pub error_series: BTreeMap<i64, u64>,
    /// `tools/call` by tool name.
    pub tools: TopTable,
    /// `resources/read`, `resources/subscribe`, `resources/unsubscribe` by URI.
    pub resources: TopTable,
    /// `resources/read` by template (key `T` + template) or origin (key `O` + origin).
    pub read_groups: TopTable,
    /// `completion/complete` of a resource template, by template (`extra`: completions followed by
    /// a read of that template in the same session).
    pub completions: TopTable,
    /// (session, template) pairs completed and not yet followed by a read (at most
    /// [`MAX_PENDING_COMPLETIONS`]).
    completed: HashSet<(u64, String)>,
    /// `prompts/get` by prompt name.
    pub prompts: TopTable,
    /// Errors by code (or type) and message: key `code\0message`.
    pub error_kinds: TopTable,
    /// Clients by name and version: key `name\0version`; `extra` counts sessions.
    pub clients: TopTable,
    /// The slowest operations, unordered.
    pub slowest: Vec<Slow>,
    seq: u64,
    /// Known templates.
    pub templates: Templates,
    /// A templates/list event named a template not known before.
    pub templates_changed: bool,
}

/// The most (session, template) completions remembered until a read follows them.
pub const MAX_PENDING_COMPLETIONS: usize = 100_000;

/// Hash of a session id (std's SipHash with fixed keys: the same in every run).
fn session_hash(s: &str) -> u64 {
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// Epoch milliseconds of an RFC 3339 timestamp.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s).ok().map(|d| d.timestamp_millis())
}

impl Stats {
    /// Empty stats; `templates` are the known templates (from `--templates` and a first pass).
    pub fn new(options: Options, templates: Templates) -> Stats {
        let cap = options.max_keys;
        Stats {
            options,
            events: 0,
            errors: 0,
            bad_lines: 0,
            bad_listed: Vec::new(),
            sessions: HashSet::new(),
            sessionless: 0,
            span: None,
            untimed: 0,
            type_index: HashMap::new(),
            types: Vec::new(),
            bucket_ms: WIDTHS_MS[0],
            width_step: 0,
            series: BTreeMap::new(),
            error_series: BTreeMap::new(),
            tools: TopTable::new(cap),
            resources: TopTable::new(cap),
            read_groups: TopTable::new(cap),
            completions: TopTable::new(cap),
            completed: HashSet::new(),
            prompts: TopTable::new(cap),
            error_kinds: TopTable::new(cap),
            clients: TopTable::new(cap),
            slowest: Vec::new(),
            seq: 0,
            templates,
            templates_changed: false,
        }
    }

    /// Distinct sessions.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    fn bad(&mut self, file: &str, line: u64, reason: String) {
        self.bad_lines += 1;
        if self.bad_listed.len() < BAD_LINES_LISTED {
            self.bad_listed.push(BadLine { file: file.to_owned(), line, reason });
        }
    }

    /// Adds one line (without its newline) of `file` (its 1-based number `line_no`). Blank lines
    /// are skipped; lines that are not events are counted.
    pub fn add_line(&mut self, raw: &[u8], file: &str, line_no: u64) {
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let e: Line = match serde_json::from_slice(raw) {
            Ok(e) => e,
            Err(err) => {
                let reason = if std::str::from_utf8(raw).is_err() {
                    "not UTF-8".to_owned()
                } else if err.is_data() {
                    "not an event (a field is missing or of the wrong type)".to_owned()
                } else {
                    "not JSON".to_owned()
                };
                return self.bad(file, line_no, reason);
            }
        };
        if !e.duration_ms.is_finite() || e.duration_ms < 0.0 {
            return self.bad(file, line_no, "not an event (durationMs is not a finite number ≥ 0)".to_owned());
        }
        let kind = e.kind.0.as_ref();
        if kind == "mcp:resources/templates/list" {
            let found = templates_in(raw);
            if self.templates.extend(found) {
                self.templates_changed = true;
            }
        }
        self.events += 1;
        self.errors += u64::from(e.is_error);
        let d = e.duration_ms;

        // Per type (exact).
        let ti = match self.type_index.get(kind) {
            Some(&i) => i,
            None if self.types.len() < MAX_TYPES => {
                self.types.push((kind.to_owned(), TypeStats::default()));
                self.type_index.insert(kind.to_owned(), self.types.len() - 1);
                self.types.len() - 1
            }
            None => match self.type_index.get(OTHER_TYPES) {
                Some(&i) => i,
                None => {
                    self.types.push((OTHER_TYPES.to_owned(), TypeStats::default()));
                    self.type_index.insert(OTHER_TYPES.to_owned(), self.types.len() - 1);
                    self.types.len() - 1
                }
            },
        };
        let t = &mut self.types[ti].1;
        t.durations.push(d);
        t.errors += u64::from(e.is_error);

        // Time.
        match e.timestamp.as_ref().and_then(|s| parse_timestamp(&s.0)) {
            Some(ms) => {
                self.span = Some(match self.span {
                    None => (ms, ms),
                    Some((a, b)) => (a.min(ms), b.max(ms)),
                });
                self.add_to_series(ms, ti, e.is_error);
            }
            None => self.untimed += 1,
        }

        // Sessions and clients.
        let new_session = match &e.session_id {
            Some(s) => self.sessions.insert(session_hash(&s.0)),
            None => {
                self.sessionless += 1;
                false
            }
        };
        let client = match &e.client {
            Some(c) => format!(
                "{}\0{}",
                c.name.as_ref().map_or("(unnamed)", |n| &n.0),
                c.version.as_ref().map_or("", |v| &v.0)
            ),
            None => "(unknown client)\0".to_owned(),
        };
        let row = self.clients.hit(&client);
        row.errors += u64::from(e.is_error);
        row.extra += u64::from(new_session);

        // Named things.
        let name = e.resource_name.as_ref().map(|n| n.0.as_ref());
        let table = match kind {
            "mcp:tools/call" => Some(&mut self.tools),
            "mcp:resources/read" | "mcp:resources/subscribe" | "mcp:resources/unsubscribe" => Some(&mut self.resources),
            "mcp:prompts/get" => Some(&mut self.prompts),
            _ => None,
        };
        if let (Some(table), Some(name)) = (table, name) {
            let row = table.hit(name);
            row.errors += u64::from(e.is_error);
            row.durations.add(d);
        }
        let session = e.session_id.as_ref().map(|s| session_hash(&s.0));
        if let ("mcp:resources/read", Some(uri)) = (kind, name) {
            let key = match read_group(self.templates.list(), uri) {
                ReadGroup::Template(t) => {
                    // A read of a template this session completed: the completion led to it.
                    if let Some(done) = session.and_then(|s| self.completed.take(&(s, t.to_owned()))) {
                        if !e.is_error {
                            self.completions.add_extra(&done.1);
                        } else {
                            self.completed.insert(done);
                        }
                    }
                    format!("T{t}")
                }
                ReadGroup::Origin(o) => format!("O{o}"),
            };
            let row = self.read_groups.hit(&key);
            row.errors += u64::from(e.is_error);
            row.durations.add(d);
        }
        // A completion names a resource template (`ref/resource`) by its URI template, or a prompt
        // by its name: only templates (they hold a `{`) are counted here.
        if let ("mcp:completion/complete", Some(template)) = (kind, name.filter(|n| n.contains('{'))) {
            let row = self.completions.hit(template);
            row.errors += u64::from(e.is_error);
            row.durations.add(d);
            if let (Some(s), false) = (session, e.is_error) {
                if self.completed.len() < MAX_PENDING_COMPLETIONS {
                    self.completed.insert((s, template.to_owned()));
                }
            }
        }

        // Errors.
        if e.is_error {
            let (code, message) = match &e.error {
                Some(p) => (
                    match (&p.code, &p.kind) {
                        (Some(c), _) => c.to_string(),
                        (None, Some(k)) => k.0.to_string(),
                        (None, None) => String::new(),
                    },
                    p.message.as_ref().map_or("", |m| &m.0).to_owned(),
                ),
                None => (String::new(), String::new()),
            };
            let row = self.error_kinds.hit(&format!("{code}\0{message}"));
            row.errors += 1;
            row.durations.add(d);
        }

        // Slowest.
        self.seq += 1;
        let min = self.slowest.iter().enumerate().min_by(|a, b| a.1.duration_ms.total_cmp(&b.1.duration_ms));
        let replace = match min {
            _ if self.slowest.len() < SLOWEST => None,
            Some((i, s)) if d > s.duration_ms => Some(i),
            _ => return,
        };
        let slow = Slow {
            duration_ms: d,
            kind: kind.to_owned(),
            name: name.map(str::to_owned),
            timestamp: e.timestamp.as_ref().map(|s| s.0.to_string()),
            session: e.session_id.as_ref().map(|s| s.0.to_string()),
            id: e.id.as_ref().map(|s| s.0.to_string()),
            is_error: e.is_error,
            seq: self.seq,
        };
        match replace {
            Some(i) => self.slowest[i] = slow,
            None => self.slowest.push(slow),
        }
    }

    fn add_to_series(&mut self, ms: i64, type_index: usize, is_error: bool) {
        let mut b = ms.div_euclid(self.bucket_ms);
        let (lo, hi) = match (self.series.first_key_value(), self.series.last_key_value()) {
            (Some((&lo, _)), Some((&hi, _))) => (lo.min(b), hi.max(b)),
            _ => (b, b),
        };
        if hi - lo >= MAX_BUCKETS as i64 {
            self.widen(lo * self.bucket_ms, hi * self.bucket_ms);
            b = ms.div_euclid(self.bucket_ms);
        }
        let v = self.series.entry(b).or_default();
        if v.len() <= type_index {
            v.resize(type_index + 1, 0);
        }
        v[type_index] += 1;
        if is_error {
            *self.error_series.entry(b).or_default() += 1;
        }
    }

    /// Widens the buckets until `[lo_ms, hi_ms]` fits in [`MAX_BUCKETS`], merging the counts.
    fn widen(&mut self, lo_ms: i64, hi_ms: i64) {
        let old = self.bucket_ms;
        loop {
            self.width_step += 1;
            self.bucket_ms = match WIDTHS_MS.get(self.width_step) {
                Some(&w) => w,
                None => self.bucket_ms * 4,
            };
            if hi_ms.div_euclid(self.bucket_ms) - lo_ms.div_euclid(self.bucket_ms) < MAX_BUCKETS as i64 {
                break;
            }
        }
        let w = self.bucket_ms;
        let remap = |b: i64| (b * old).div_euclid(w);
        let mut series: BTreeMap<i64, Vec<u64>> = BTreeMap::new();
        for (b, v) in std::mem::take(&mut self.series) {
            let dst = series.entry(remap(b)).or_default();
            if dst.len() < v.len() {
                dst.resize(v.len(), 0);
            }
            for (i, c) in v.into_iter().enumerate() {
                dst[i] += c;
            }
        }
        self.series = series;
        let mut errors = BTreeMap::new();
        for (b, c) in std::mem::take(&mut self.error_series) {
            *errors.entry(remap(b)).or_default() += c;
        }
        self.error_series = errors;
    }

    /// The slowest operations, slowest first (ties: first read first).
    pub fn slowest_sorted(&self) -> Vec<&Slow> {
        let mut v: Vec<&Slow> = self.slowest.iter().collect();
        v.sort_by(|a, b| b.duration_ms.total_cmp(&a.duration_ms).then(a.seq.cmp(&b.seq)));
        v
    }

    /// Exact nearest-rank figures per type: (type, count, errors, p50, p95, p99).
    pub fn type_figures(&self) -> Vec<(String, u64, u64, f64, f64, f64)> {
        self.types
            .iter()
            .map(|(k, t)| {
                let mut d = t.durations.clone();
                d.sort_unstable_by(f64::total_cmp);
                let r = |q| crate::events::nearest_rank(&d, q);
                (k.clone(), d.len() as u64, t.errors, r(0.50), r(0.95), r(0.99))
            })
            .collect()
    }
}

/// Templates from `--templates FILE`: the output of `mcplens templates --json`
/// (`{"resourceTemplates": [{"uriTemplate": …}]}`), a JSON array of strings, or one template per
/// line (blank lines and lines starting with `#` skipped).
pub fn templates_from_file(text: &str) -> Vec<String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Tool {
            #[serde(rename = "resourceTemplates")]
            resource_templates: Vec<TemplateItem>,
        },
        List(Vec<String>),
    }
    match serde_json::from_str::<Given>(text) {
        Ok(Given::Tool { resource_templates }) => {
            resource_templates.into_iter().filter_map(|t| t.uri_template).collect()
        }
        Ok(Given::List(l)) => l,
        Err(_) => {
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned).collect()
        }
    }
}

/// The templates named by `resources/templates/list` events in `paths` (a quick first pass:
/// only lines holding that event type are parsed).
pub fn scan_templates(paths: &[std::path::PathBuf], templates: &mut Templates) -> std::io::Result<()> {
    use std::io::BufRead;
    let finder = memchr::memmem::Finder::new(b"\"mcp:resources/templates/list\"");
    let mut buf = Vec::new();
    for p in paths {
        let f = match std::fs::File::open(p) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(std::io::Error::new(e.kind(), format!("cannot read {}: {}", p.display(), e.kind()))),
        };
        let mut r = std::io::BufReader::with_capacity(256 * 1024, f);
        loop {
            buf.clear();
            if r.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            if finder.find(&buf).is_some() {
                templates.extend(templates_in(&buf));
            }
        }
    }
    Ok(())
}

/// Reads every file of `set` (a first pass for templates, then every line) into new stats, with
/// a progress bar (the bar covers the second pass, which takes nearly all the time).
pub fn collect(
    set: &mut files::FileSet,
    options: &Options,
    mut templates: Templates,
    live: bool,
    bar: impl FnOnce(u64) -> crate::progress::Bar,
) -> std::io::Result<Stats> {
    let paths = set.paths(!live)?;
    scan_templates(&paths, &mut templates)?;
    let mut stats = Stats::new(options.clone(), templates);
    let mut bar = bar(set.unread_bytes(&paths));
    let mut lines = 0u64;
    set.read_new(&paths, live, &mut |l, file, n| stats.add_line(l, file, n), &mut |b| {
        lines += 1;
        bar.advance(b, lines);
    })?;
    bar.finish();
    // `templates_changed` now means: a template appeared after the first pass (a live file grew
    // in between), so some reads were grouped without it.
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: &str, ms: f64, extra: &str) -> String {
        format!(
            "{{\"schema\":1,\"type\":\"{kind}\",\"durationMs\":{ms},\"isError\":false,\"sessionId\":\"ses_a\",\
             \"timestamp\":\"2026-11-29T10:00:00.000Z\"{extra}}}"
        )
    }

    #[test]
    fn origin_is_scheme_and_authority() {
        assert_eq!(origin("note://7"), "note://7");
        assert_eq!(origin("file:///a/b.txt"), "file://");
        assert_eq!(origin("https://user:pw@example.com:8443/x?y#z"), "https://example.com:8443");
        assert_eq!(origin("urn:isbn:123"), "urn:");
        assert_eq!(origin("no scheme here"), "(no scheme)");
        assert_eq!(origin("1bad://x"), "(no scheme)");
    }

    #[test]
    fn reads_fall_back_to_origin_without_templates() {
        let t = Templates::default();
        assert_eq!(read_group(t.list(), "notes://rust/1"), ReadGroup::Origin("notes://rust".into()));
    }

    #[test]
    fn reads_group_by_matching_template() {
        let mut t = Templates::default();
        t.extend(["notes://{topic}/{id}".to_owned(), "notes://rust/{id}".to_owned(), "file:///{+path}".to_owned()]);
        assert_eq!(t.list()[0], "notes://rust/{id}", "most literal characters first");
        assert_eq!(read_group(t.list(), "notes://rust/1"), ReadGroup::Template("notes://rust/{id}"));
        assert_eq!(read_group(t.list(), "notes://go/2"), ReadGroup::Template("notes://{topic}/{id}"));
        assert_eq!(read_group(t.list(), "file:///a/b"), ReadGroup::Template("file:///{+path}"));
        assert_eq!(read_group(t.list(), "mem://x"), ReadGroup::Origin("mem://x".into()));
    }

    #[test]
    fn templates_come_from_template_list_events() {
        let l = line(
            "mcp:resources/templates/list",
            1.0,
            ",\"response\":{\"resourceTemplates\":[{\"uriTemplate\":\"a://{x}\",\"name\":\"a\"},{\"name\":\"no template\"}]}",
        );
        let mut s = Stats::new(Options::default(), Templates::default());
        s.add_line(l.as_bytes(), "f", 1);
        assert_eq!(s.templates.list(), ["a://{x}"]);
        assert!(s.templates_changed);
    }

    #[test]
    fn bad_lines_are_counted_with_their_reason() {
        let mut s = Stats::new(Options::default(), Templates::default());
        s.add_line(b"not json", "f", 1);
        s.add_line(b"{\"type\":\"x\"}", "f", 2);
        s.add_line(b"\xff\xfe", "f", 3);
        s.add_line(b"   ", "f", 4);
        s.add_line(b"{\"type\":\"x\",\"durationMs\":-1}", "f", 5);
        s.add_line(line("mcp:tools/list", 1.0, "").as_bytes(), "f", 6);
        assert_eq!((s.events, s.bad_lines), (1, 4));
        let reasons: Vec<&str> = s.bad_listed.iter().map(|b| b.reason.as_str()).collect();
        assert_eq!(reasons[0], "not JSON");
        assert!(reasons[1].starts_with("not an event"));
        assert_eq!(reasons[2], "not UTF-8");
        assert_eq!(s.bad_listed[3].line, 5);
    }

    #[test]
    fn buckets_widen_and_keep_every_count() {
        let mut s = Stats::new(Options::default(), Templates::default());
        // One event a second for an hour: 1 s buckets widen to 30 s (120 buckets).
        for i in 0..3600i64 {
            let ts = chrono::DateTime::from_timestamp_millis(1_800_000_000_000 + i * 1000).unwrap();
            let l = format!(
                "{{\"type\":\"mcp:tools/list\",\"durationMs\":1,\"timestamp\":\"{}\",\"isError\":{}}}",
                ts.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                i % 100 == 0
            );
            s.add_line(l.as_bytes(), "f", i as u64);
        }
        assert_eq!(s.bucket_ms, 30_000);
        assert!(s.series.len() <= MAX_BUCKETS);
        assert_eq!(s.series.values().map(|v| v.iter().sum::<u64>()).sum::<u64>(), 3600);
        assert_eq!(s.error_series.values().sum::<u64>(), 36);
        assert_eq!(s.span.map(|(a, b)| b - a), Some(3_599_000));
    }

    #[test]
    fn types_past_the_cap_share_one_row() {
        let mut s = Stats::new(Options::default(), Templates::default());
        for i in 0..(MAX_TYPES + 5) {
            s.add_line(line(&format!("t{i}"), 1.0, "").as_bytes(), "f", 1);
        }
        assert_eq!(s.types.len(), MAX_TYPES + 1);
        assert_eq!(s.types.last().map(|(k, t)| (k.as_str(), t.durations.len())), Some((OTHER_TYPES, 5)));
    }
}
