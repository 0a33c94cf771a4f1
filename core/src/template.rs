//! RFC 6570 URI templates for the model: [`variables`], [`expand`] (level 4) and [`matches`].
//!
//! Pure functions, run only when a caller asks: discovery, the catalog and the listing tools never
//! expand a template, read a resource or call `completion/complete`. Everything in `docs/templates.md`
//! is pinned by the shared vectors in `tests/vectors/templates/` and by the external RFC 6570 suite
//! (`tests/uritemplate-test/`), which Rust, Python and Node all run.
//!
//! - **One parser.** [`Template::parse`] is the check discovery applies to every `uriTemplate`
//!   ([`check_uri_template`] is it): a template discovery keeps is one [`expand`]
//!   accepts, and the reverse. It enforces RFC 6570's grammar (levels 1–4) and the mcplens character
//!   rules (at most [`MAX_CHARS`](crate::sanitize::MAX_CHARS) characters; no controls, whitespace,
//!   bidi, zero-width or other invisible characters, no U+FFFD).
//! - **`'` is a literal.** RFC 6570's `literals` production leaves out `'` (%x27), although RFC 3986
//!   counts it among the sub-delims of a URI and the RFC's own examples (and the suite) expand
//!   `'{var}'`. mcplens reads `'` as a literal, copied as is.
//! - **Values** ([`Values`], [`Value`]): strings, numbers (written as serde_json writes them: `6`,
//!   `37.76`, `6.0` for a float with no fraction, `1e+21`), lists and associative arrays (order kept);
//!   `null` or a missing name is undefined, as in the RFC, and so is a `null` member of a list or an
//!   associative array. Booleans, nested composites and non-finite numbers are `invalid_value`.
//! - **Caps.** An expansion longer than [`MAX_URI_BYTES`] (8 KiB) is `output_too_large`; [`matches`]
//!   refuses a URI longer than that (`invalid_argument`) and gives up after [`MATCH_STEPS`] steps of
//!   search (`match_limit`). Nothing here panics on any input.
//!
//! Matching (levels 1–4; the rules for ambiguous URIs are in `docs/templates.md`): literals must
//! appear in the URI (an unreserved or non-ASCII character also as its pct-encoded form); each
//! expression takes the longest span that lets the rest of the template match (leftmost first);
//! within an expression, values are assigned left to right. Values of the reserved operators (`+`,
//! `#`) keep the pct-encoded triplets that reserved expansion passes through; every other operator's
//! values are pct-decoded.

use crate::error::ErrorCode;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

use crate::sanitize::{self, TemplateProblem};

/// Checks a URI template against RFC 6570 (levels 1–4) and the mcplens character rules
/// ([`sanitize::check_uri_chars`]). The template itself is never changed: callers keep or drop it
/// whole.
///
/// This is [`Template::parse`], the parser `variables`/`expand`/`matches` use: a template discovery
/// keeps is one they accept, and the reverse (`'` is read as a literal: see `docs/templates.md`).
pub fn check_uri_template(t: &str) -> Result<(), TemplateProblem> {
    Template::check(t)
}

/// The cap on an expanded URI, in bytes (8 KiB); also the longest URI [`matches`] accepts.
pub const MAX_URI_BYTES: usize = 8192;

/// The most search steps one [`matches`] call takes (a step: one candidate span tried, or one
/// character examined). Ordinary templates need a few hundred; only pathological pairs of templates
/// and URIs (many adjacent expressions over a long URI) come near it.
pub const MATCH_STEPS: u64 = 1_000_000;

/// Longest variable name an error message repeats (names are ASCII by the grammar).
const NAME_IN_ERRORS: usize = 64;

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Template errors. Messages name the variable and the bound, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template is not valid RFC 6570 (levels 1–4) or breaks the mcplens character rules.
    #[error("invalid URI template: {} at character {at}", problem_text(*problem))]
    InvalidTemplate {
        /// What is wrong.
        problem: TemplateProblem,
        /// The 1-based character position where it went wrong.
        at: usize,
    },
    /// A value of the wrong type (a boolean, a nested list or object, a non-finite number), or
    /// values that are not an object.
    #[error("invalid value{}: {reason}", variable.as_ref().map(|v| format!(" for \"{v}\"")).unwrap_or_default())]
    InvalidValue {
        /// The variable (capped at 64 characters, sanitized), when the problem is one value.
        variable: Option<String>,
        /// What is wrong (fixed text).
        reason: &'static str,
    },
    /// A prefix modifier (`{var:3}`) on a list or associative array.
    #[error("the prefix modifier of \"{variable}\" applies to strings only, and its value is a list or an associative array")]
    PrefixOnComposite {
        /// The variable.
        variable: String,
    },
    /// The expansion would be longer than [`MAX_URI_BYTES`].
    #[error("the expanded URI would be over the {max}-byte limit")]
    OutputTooLarge {
        /// The cap.
        max: usize,
    },
    /// A URI handed to [`matches`] is longer than [`MAX_URI_BYTES`].
    #[error("invalid argument: the URI is {bytes} bytes, over the {max}-byte limit")]
    UriTooLong {
        /// The URI's length.
        bytes: usize,
        /// The cap.
        max: usize,
    },
    /// [`matches`] gave up after [`MATCH_STEPS`] steps.
    #[error("matching gave up after {steps} steps: the template is too ambiguous for this URI")]
    MatchLimit {
        /// The budget.
        steps: u64,
    },
}

impl TemplateError {
    /// The stable code (see `docs/errors.md`).
    pub fn code(&self) -> ErrorCode {
        match self {
            TemplateError::InvalidTemplate { .. } => ErrorCode::InvalidUriTemplate,
            TemplateError::InvalidValue { .. } => ErrorCode::InvalidValue,
            TemplateError::PrefixOnComposite { .. } => ErrorCode::PrefixOnComposite,
            TemplateError::OutputTooLarge { .. } => ErrorCode::OutputTooLarge,
            TemplateError::UriTooLong { .. } => ErrorCode::InvalidArgument,
            TemplateError::MatchLimit { .. } => ErrorCode::MatchLimit,
        }
    }
}

fn problem_text(p: TemplateProblem) -> &'static str {
    match p {
        TemplateProblem::TooLong => "over 2048 characters",
        TemplateProblem::ForbiddenChar => "a control, whitespace or invisible character",
        TemplateProblem::Syntax => "not RFC 6570 syntax",
    }
}

fn invalid(variable: &str, reason: &'static str) -> TemplateError {
    let v: String = sanitize::label(variable).chars().take(NAME_IN_ERRORS).collect();
    TemplateError::InvalidValue { variable: Some(v), reason }
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/// An RFC 6570 expression operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operator {
    /// `{var}`: simple string expansion.
    Simple,
    /// `{+var}`: reserved expansion.
    Reserved,
    /// `{#var}`: fragment expansion.
    Fragment,
    /// `{.var}`: label expansion.
    Label,
    /// `{/var}`: path segments.
    Path,
    /// `{;var}`: path-style parameters.
    PathParam,
    /// `{?var}`: form-style query.
    Query,
    /// `{&var}`: form-style query continuation.
    QueryContinuation,
}

impl Operator {
    /// The operator as written in the template (`""` for simple expansion).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Simple => "",
            Operator::Reserved => "+",
            Operator::Fragment => "#",
            Operator::Label => ".",
            Operator::Path => "/",
            Operator::PathParam => ";",
            Operator::Query => "?",
            Operator::QueryContinuation => "&",
        }
    }

    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::PathParam,
            '?' => Operator::Query,
            '&' => Operator::QueryContinuation,
            _ => return None,
        })
    }

    /// The character an expansion starts with (RFC 6570 appendix A, `first`).
    fn first(self) -> Option<u8> {
        match self {
            Operator::Simple | Operator::Reserved => None,
            Operator::Fragment => Some(b'#'),
            Operator::Label => Some(b'.'),
            Operator::Path => Some(b'/'),
            Operator::PathParam => Some(b';'),
            Operator::Query => Some(b'?'),
            Operator::QueryContinuation => Some(b'&'),
        }
    }

    /// The separator between values (`sep`).
    fn sep(self) -> u8 {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => b',',
            Operator::Label => b'.',
            Operator::Path => b'/',
            Operator::PathParam => b';',
            Operator::Query | Operator::QueryContinuation => b'&',
        }
    }

    /// Name=value pairs (`named`).
    fn named(self) -> bool {
        matches!(self, Operator::PathParam | Operator::Query | Operator::QueryContinuation)
    }

    /// What an empty value writes after its name (`ifemp`).
    fn ifemp(self) -> &'static str {
        if self == Operator::PathParam {
            ""
        } else {
            "="
        }
    }

    /// Reserved characters and pct-encoded triplets pass through (`allow` = U+R).
    fn reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }
}

impl Serialize for Operator {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One variable of a template, as [`variables`] lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variable {
    /// The name, as written (it may hold `.` and pct-encoded triplets).
    pub name: String,
    /// The expression's operator.
    pub operator: Operator,
    /// The explode modifier (`*`).
    pub explode: bool,
    /// The prefix modifier (`:n`, 1..=9999), in characters.
    pub prefix: Option<u16>,
}

#[derive(Debug, Clone)]
struct VarSpec<'a> {
    name: &'a str,
    explode: bool,
    prefix: Option<u16>,
}

#[derive(Debug, Clone)]
struct Expression<'a> {
    op: Operator,
    vars: Vec<VarSpec<'a>>,
}

#[derive(Debug, Clone)]
enum Part<'a> {
    Literal(&'a str),
    Expression(Expression<'a>),
}

/// A parsed URI template (borrowing its text). Parse once to expand or match many times.
#[derive(Debug, Clone)]
pub struct Template<'a> {
    text: &'a str,
    parts: Vec<Part<'a>>,
}

impl<'a> Template<'a> {
    /// Parses `text`: RFC 6570 levels 1–4 plus the mcplens character rules (see the module docs).
    pub fn parse(text: &'a str) -> Result<Template<'a>, TemplateError> {
        if let Err(problem) = sanitize::check_uri_chars(text) {
            let at = match problem {
                TemplateProblem::TooLong => sanitize::MAX_CHARS + 1,
                _ => text.chars().position(forbidden_char).map_or(1, |i| i + 1),
            };
            return Err(TemplateError::InvalidTemplate { problem, at });
        }
        let parts = Parser::<true> { text, pos: 0 }.template().map_err(|byte| TemplateError::InvalidTemplate {
            problem: TemplateProblem::Syntax,
            at: text[..byte.min(text.len())].chars().count() + 1,
        })?;
        Ok(Template { text, parts })
    }

    /// What [`Template::parse`] decides, without building the parts (no allocation): the same
    /// character check and the same parser, run with `BUILD = false`.
    pub(crate) fn check(text: &str) -> Result<(), TemplateProblem> {
        sanitize::check_uri_chars(text)?;
        Parser::<false> { text, pos: 0 }.template().map(drop).map_err(|_| TemplateProblem::Syntax)
    }

    /// The template text.
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// Every variable, in order of appearance (a name used twice is listed twice).
    pub fn variables(&self) -> Vec<Variable> {
        self.expressions()
            .flat_map(|e| {
                e.vars.iter().map(move |v| Variable {
                    name: v.name.to_owned(),
                    operator: e.op,
                    explode: v.explode,
                    prefix: v.prefix,
                })
            })
            .collect()
    }

    fn expressions(&self) -> impl Iterator<Item = &Expression<'a>> {
        self.parts.iter().filter_map(|p| match p {
            Part::Expression(e) => Some(e),
            Part::Literal(_) => None,
        })
    }

    /// The number of literal characters: how specific the template is (used to order catalog
    /// matches).
    pub(crate) fn literal_chars(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Literal(l) => l.chars().count(),
                Part::Expression(_) => 0,
            })
            .sum()
    }

    /// Expands the template with `values` (RFC 6570 level 4).
    pub fn expand(&self, values: &Values) -> Result<String, TemplateError> {
        let mut out = Out { s: String::with_capacity(self.text.len() + 16) };
        for part in &self.parts {
            match part {
                Part::Literal(l) => out.literal(l)?,
                Part::Expression(e) => expand_expression(e, values, &mut out)?,
            }
        }
        Ok(out.s)
    }

    /// The values under which the template expands to `uri`, or `None` when no values do (see
    /// the module docs and `docs/templates.md` for the reading of ambiguous URIs).
    pub fn matches(&self, uri: &str) -> Result<Option<Values>, TemplateError> {
        self.matches_within(uri, MATCH_STEPS).0
    }

    /// [`Template::matches`] within `budget` steps; also returns the steps taken.
    pub(crate) fn matches_within(&self, uri: &str, budget: u64) -> (Result<Option<Values>, TemplateError>, u64) {
        if uri.len() > MAX_URI_BYTES {
            return (Err(TemplateError::UriTooLong { bytes: uri.len(), max: MAX_URI_BYTES }), 0);
        }
        let mut m = Matcher { parts: &self.parts, uri, memo: HashMap::new(), steps: 0, budget };
        let result = match m.fit(0, 0) {
            Ok(true) => Ok(m.collect()),
            Ok(false) => Ok(None),
            Err(e) => Err(e),
        };
        (result, m.steps)
    }
}

fn forbidden_char(c: char) -> bool {
    c.is_control() || c.is_whitespace() || sanitize::is_forbidden_invisible(c) || c == '\u{FFFD}'
}

/// Parses `template`: see [`Template::parse`].
pub fn parse(template: &str) -> Result<Template<'_>, TemplateError> {
    Template::parse(template)
}

/// Each variable's name, operator, explode flag and prefix length, in order of appearance.
pub fn variables(template: &str) -> Result<Vec<Variable>, TemplateError> {
    Ok(Template::parse(template)?.variables())
}

/// Expands `template` with `values` (RFC 6570 level 4).
pub fn expand(template: &str, values: &Values) -> Result<String, TemplateError> {
    Template::parse(template)?.expand(values)
}

/// The values under which `template` expands to `uri`, or `None`.
pub fn matches(template: &str, uri: &str) -> Result<Option<Values>, TemplateError> {
    Template::parse(template)?.matches(uri)
}

/// The recursive-descent parser; errors are the byte offset where the template went wrong.
/// With `BUILD = false` it only checks: the same grammar, nothing pushed (no allocation), so
/// discovery's check and [`Template::parse`] cannot disagree.
struct Parser<'a, const BUILD: bool> {
    text: &'a str,
    pos: usize,
}

impl<'a, const BUILD: bool> Parser<'a, BUILD> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn template(mut self) -> Result<Vec<Part<'a>>, usize> {
        let mut parts = Vec::new();
        let mut start = 0;
        let bytes = self.text.as_bytes();
        loop {
            // A run of ASCII literals, the bulk of a template, in a tight loop.
            self.pos += bytes.get(self.pos..).unwrap_or_default().iter().take_while(|&&b| is_ascii_literal(b)).count();
            let Some(b) = self.peek() else { break };
            match b {
                b'{' => {
                    if BUILD && start < self.pos {
                        parts.push(Part::Literal(&self.text[start..self.pos]));
                    }
                    self.pos += 1;
                    let e = self.expression()?;
                    if BUILD {
                        parts.push(Part::Expression(e));
                    }
                    start = self.pos;
                }
                b'%' => self.pct()?,
                _ if b.is_ascii() => {
                    if !is_ascii_literal(b) {
                        return Err(self.pos);
                    }
                    self.pos += 1;
                }
                _ => {
                    let c = self.text[self.pos..].chars().next().expect("not at the end");
                    if !is_literal(c) {
                        return Err(self.pos);
                    }
                    self.pos += c.len_utf8();
                }
            }
        }
        if BUILD && start < self.pos {
            parts.push(Part::Literal(&self.text[start..]));
        }
        Ok(parts)
    }

    fn pct(&mut self) -> Result<(), usize> {
        let b = self.text.as_bytes();
        if b.get(self.pos + 1).is_some_and(u8::is_ascii_hexdigit)
            && b.get(self.pos + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            self.pos += 3;
            Ok(())
        } else {
            Err(self.pos)
        }
    }

    /// `"{" [ operator ] variable-list "}"`, the `{` consumed. The reserved operators
    /// (`= , ! @ |`) and anything else are syntax errors.
    fn expression(&mut self) -> Result<Expression<'a>, usize> {
        let op = match self.peek().and_then(|b| Operator::from_char(b as char)) {
            Some(op) => {
                self.pos += 1;
                op
            }
            None => Operator::Simple,
        };
        let mut vars = Vec::new();
        loop {
            let v = self.varspec()?;
            if BUILD {
                vars.push(v);
            }
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Expression { op, vars });
                }
                _ => return Err(self.pos),
            }
        }
    }

    /// `varname [ ":" max-length / "*" ]`, `varname = varchar *( ["."] varchar )`.
    fn varspec(&mut self) -> Result<VarSpec<'a>, usize> {
        let start = self.pos;
        self.varchar()?;
        loop {
            match self.peek() {
                Some(b'.') => {
                    self.pos += 1;
                    self.varchar()?;
                }
                Some(b) if is_ascii_varchar(b) => self.pos += 1,
                Some(b'%') => self.pct()?,
                _ => break,
            }
        }
        let name = &self.text[start..self.pos];
        let (mut explode, mut prefix) = (false, None);
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                // max-length = %x31-39 0*3DIGIT  (1..=9999)
                let digits = self.text.as_bytes()[self.pos..].iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == 0 || digits > 4 || self.peek() == Some(b'0') {
                    return Err(self.pos);
                }
                prefix = self.text[self.pos..self.pos + digits].parse().ok();
                self.pos += digits;
            }
            Some(b'*') => {
                self.pos += 1;
                explode = true;
            }
            _ => {}
        }
        Ok(VarSpec { name, explode, prefix })
    }

    fn varchar(&mut self) -> Result<(), usize> {
        match self.peek() {
            Some(b) if is_ascii_varchar(b) => {
                self.pos += 1;
                Ok(())
            }
            Some(b'%') => self.pct(),
            _ => Err(self.pos),
        }
    }
}

/// RFC 6570 §2.1 literals (outside `%`, which starts a pct-encoded triplet), plus `'` (see the
/// module docs).
fn is_literal(c: char) -> bool {
    match u8::try_from(c) {
        Ok(b) if b.is_ascii() => is_ascii_literal(b),
        _ => is_ucschar(c) || is_iprivate(c),
    }
}

/// A 256-entry byte set of the given inclusive ranges: one lookup per byte, no bounds check.
const fn byte_set(ranges: &[(u8, u8)]) -> [bool; 256] {
    let mut set = [false; 256];
    let mut i = 0;
    while i < ranges.len() {
        let (mut b, last) = ranges[i];
        while b <= last {
            set[b as usize] = true;
            if b == last {
                break;
            }
            b += 1;
        }
        i += 1;
    }
    set
}

/// The ASCII literals.
#[inline(always)]
fn is_ascii_literal(b: u8) -> bool {
    static LITERALS: [bool; 256] = byte_set(&[
        (0x21, 0x21),
        (0x23, 0x24),
        (0x26, 0x3B),
        (0x3D, 0x3D),
        (0x3F, 0x5B),
        (0x5D, 0x5D),
        (0x5F, 0x5F),
        (0x61, 0x7A),
        (0x7E, 0x7E),
    ]);
    LITERALS[usize::from(b)]
}

/// A variable name's characters outside pct-encoded triplets: ALPHA, DIGIT and `_`.
#[inline(always)]
fn is_ascii_varchar(b: u8) -> bool {
    static VARCHARS: [bool; 256] = byte_set(&[(b'0', b'9'), (b'A', b'Z'), (b'_', b'_'), (b'a', b'z')]);
    VARCHARS[usize::from(b)]
}

fn is_ucschar(c: char) -> bool {
    matches!(c as u32,
        0xA0..=0xD7FF | 0xF900..=0xFDCF | 0xFDF0..=0xFFEF
        | 0x10000..=0x1FFFD | 0x20000..=0x2FFFD | 0x30000..=0x3FFFD
        | 0x40000..=0x4FFFD | 0x50000..=0x5FFFD | 0x60000..=0x6FFFD
        | 0x70000..=0x7FFFD | 0x80000..=0x8FFFD | 0x90000..=0x9FFFD
        | 0xA0000..=0xAFFFD | 0xB0000..=0xBFFFD | 0xC0000..=0xCFFFD
        | 0xD0000..=0xDFFFD | 0xE1000..=0xEFFFD)
}

fn is_iprivate(c: char) -> bool {
    matches!(c as u32, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD)
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/// A variable's value: a string, a list or an associative array (order kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A string (numbers become strings when values are read).
    String(String),
    /// A list of strings.
    List(Vec<String>),
    /// An associative array, in its order.
    Assoc(Vec<(String, String)>),
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<Vec<String>> for Value {
    fn from(v: Vec<String>) -> Value {
        Value::List(v)
    }
}

impl From<Vec<(String, String)>> for Value {
    fn from(v: Vec<(String, String)>) -> Value {
        Value::Assoc(v)
    }
}

impl Value {
    /// Undefined in the RFC's sense: an empty list or associative array.
    fn is_undefined(&self) -> bool {
        match self {
            Value::String(_) => false,
            Value::List(l) => l.is_empty(),
            Value::Assoc(a) => a.is_empty(),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::String(v) => s.serialize_str(v),
            Value::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Value::Assoc(pairs) => {
                let mut map = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Named values for [`expand`], and what [`matches`] returns: an ordered map, serialized as a
/// JSON object in its order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Values(Vec<(String, Value)>);

impl Values {
    /// No values.
    pub fn new() -> Values {
        Values::default()
    }

    /// Sets `name` (replacing an earlier value).
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<Value>) -> &mut Values {
        let (name, value) = (name.into(), value.into());
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
        self
    }

    /// The value of `name`, if defined.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// The number of defined names.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no name is defined.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Reads values from JSON text: an object of strings, numbers, lists and objects (`null` =
    /// undefined).
    pub fn from_json(text: &str) -> Result<Values, TemplateError> {
        let json: Json = serde_json::from_str(text)
            .map_err(|_| TemplateError::InvalidValue { variable: None, reason: "the values are not valid JSON" })?;
        Values::from_ordered_json(json)
    }

    /// Reads values from an order-keeping JSON tree (what a binding deserializes a host object
    /// into).
    pub fn from_ordered_json(json: Json) -> Result<Values, TemplateError> {
        let Json::Object(members) = json else {
            return Err(TemplateError::InvalidValue { variable: None, reason: "the values must be an object" });
        };
        let mut out = Values::new();
        for (name, v) in members {
            let value = match v {
                Json::Null => continue,
                Json::Array(items) => Value::List(
                    items.into_iter().filter_map(|i| scalar(&name, i).transpose()).collect::<Result<_, _>>()?,
                ),
                Json::Object(pairs) => Value::Assoc(
                    pairs
                        .into_iter()
                        .filter_map(|(k, i)| scalar(&name, i).map(|s| s.map(|s| (k, s))).transpose())
                        .collect::<Result<_, _>>()?,
                ),
                other => Value::String(scalar(&name, other)?.unwrap_or_default()),
            };
            out.insert(name, value);
        }
        Ok(out)
    }

    /// The values as compact JSON text (an object, in order).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("values always serialize")
    }
}

/// A string or number as a string; `None` for null; an error for anything else.
fn scalar(name: &str, v: Json) -> Result<Option<String>, TemplateError> {
    match v {
        Json::Null => Ok(None),
        Json::String(s) => Ok(Some(s)),
        Json::Number(Some(n)) => Ok(Some(n)),
        Json::Number(None) => Err(invalid(name, "numbers must be finite")),
        Json::Bool(_) => Err(invalid(name, "a value must be a string, a number, a list or an object, not a boolean")),
        Json::Array(_) | Json::Object(_) => {
            Err(invalid(name, "list members and object values must be strings or numbers, not lists or objects"))
        }
    }
}

impl Serialize for Values {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A JSON tree that keeps object members in order (serde_json's own `Value` sorts them), so an
/// associative array expands in the order the caller wrote it.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number as serde_json writes it; `None` when not finite.
    Number(Option<String>),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, members in order.
    Object(Vec<(String, Json)>),
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null | Json::Number(None) => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(Some(n)) => match serde_json::Number::from_str(n) {
                Ok(n) => n.serialize(s),
                Err(_) => s.serialize_str(n),
            },
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => items.serialize(s),
            Json::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(Some(n.to_string())))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(Some(n.to_string())))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
        Ok(Json::Number(serde_json::Number::from_f64(n).map(|n| n.to_string())))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members: Vec<(String, Json)> = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            // A repeated key: the last one wins, as in JavaScript and Python.
            members.retain(|(n, _)| *n != k);
            members.push((k, v));
        }
        Ok(Json::Object(members))
    }
}

// ---------------------------------------------------------------------------------------------
// Expansion
// ---------------------------------------------------------------------------------------------

struct Out {
    s: String,
}

impl Out {
    fn check(&self) -> Result<(), TemplateError> {
        if self.s.len() > MAX_URI_BYTES {
            Err(TemplateError::OutputTooLarge { max: MAX_URI_BYTES })
        } else {
            Ok(())
        }
    }

    fn byte(&mut self, b: u8) -> Result<(), TemplateError> {
        self.s.push(char::from(b));
        self.check()
    }

    fn raw(&mut self, s: &str) -> Result<(), TemplateError> {
        self.s.push_str(s);
        self.check()
    }

    /// A literal: ASCII and pct-encoded triplets as written, other characters pct-encoded.
    fn literal(&mut self, l: &str) -> Result<(), TemplateError> {
        for c in l.chars() {
            if c.is_ascii() {
                self.s.push(c);
            } else {
                pct_char(&mut self.s, c);
            }
        }
        self.check()
    }

    /// A value, pct-encoded: unreserved characters as is; with `reserved`, reserved characters and
    /// pct-encoded triplets too.
    fn encode(&mut self, v: &str, reserved: bool) -> Result<(), TemplateError> {
        let b = v.as_bytes();
        let mut i = 0;
        for c in v.chars() {
            let n = c.len_utf8();
            if c.is_ascii() {
                let x = c as u8;
                let triplet = x == b'%'
                    && b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
                if is_unreserved(x) || (reserved && (is_reserved(x) || triplet)) {
                    self.s.push(c);
                } else {
                    pct_char(&mut self.s, c);
                }
            } else {
                pct_char(&mut self.s, c);
            }
            i += n;
            if self.s.len() > MAX_URI_BYTES {
                return self.check();
            }
        }
        self.check()
    }
}

fn pct_char(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut buf = [0u8; 4];
    for &b in c.encode_utf8(&mut buf).as_bytes() {
        out.push('%');
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
}

/// RFC 6570 appendix A, for one expression.
fn expand_expression(e: &Expression<'_>, values: &Values, out: &mut Out) -> Result<(), TemplateError> {
    let op = e.op;
    let reserved = op.reserved();
    let mut first = true;
    for v in &e.vars {
        let Some(value) = values.get(v.name).filter(|x| !x.is_undefined()) else { continue };
        if v.prefix.is_some() && !matches!(value, Value::String(_)) {
            return Err(TemplateError::PrefixOnComposite { variable: v.name.chars().take(NAME_IN_ERRORS).collect() });
        }
        if let Some(c) = if first { op.first() } else { Some(op.sep()) } {
            out.byte(c)?;
        }
        first = false;
        match value {
            Value::String(s) => {
                if op.named() {
                    out.raw(v.name)?;
                    if s.is_empty() {
                        out.raw(op.ifemp())?;
                        continue;
                    }
                    out.raw("=")?;
                }
                match v.prefix {
                    Some(n) => {
                        let cut = s.char_indices().nth(usize::from(n)).map_or(s.len(), |(i, _)| i);
                        out.encode(&s[..cut], reserved)?;
                    }
                    None => out.encode(s, reserved)?,
                }
            }
            Value::List(_) | Value::Assoc(_) if !v.explode => {
                // `name=` for named operators, then the members (an associative array's names
                // and values alike), comma-separated.
                if op.named() {
                    out.raw(v.name)?;
                    out.raw("=")?;
                }
                let members: Vec<&str> = match value {
                    Value::Assoc(pairs) => pairs.iter().flat_map(|(k, x)| [k.as_str(), x.as_str()]).collect(),
                    Value::List(items) => items.iter().map(String::as_str).collect(),
                    Value::String(s) => vec![s.as_str()],
                };
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        out.raw(",")?;
                    }
                    out.encode(m, reserved)?;
                }
            }
            Value::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.byte(op.sep())?;
                    }
                    if op.named() {
                        out.raw(v.name)?;
                        if item.is_empty() {
                            out.raw(op.ifemp())?;
                            continue;
                        }
                        out.raw("=")?;
                    }
                    out.encode(item, reserved)?;
                }
            }
            Value::Assoc(pairs) => {
                for (i, (k, x)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.byte(op.sep())?;
                    }
                    out.encode(k, reserved)?;
                    if op.named() && x.is_empty() {
                        out.raw(op.ifemp())?;
                        continue;
                    }
                    out.raw("=")?;
                    out.encode(x, reserved)?;
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

struct Matcher<'t, 'u> {
    parts: &'t [Part<'t>],
    uri: &'u str,
    /// (part, position) → the end of that part's chosen span, or `None` when the rest cannot
    /// match from there.
    memo: HashMap<(usize, usize), Option<usize>>,
    steps: u64,
    budget: u64,
}

impl Matcher<'_, '_> {
    fn step(&mut self, n: usize) -> Result<(), TemplateError> {
        self.steps += n as u64;
        if self.steps > self.budget {
            Err(TemplateError::MatchLimit { steps: MATCH_STEPS })
        } else {
            Ok(())
        }
    }

    /// After a successful [`Matcher::fit`]: walks the chosen spans and collects the values, in
    /// order of first appearance. A name used twice must agree: the same value, or (under a
    /// prefix modifier) the first characters of it; where it is undefined, the defined value
    /// counts. Otherwise there is no match.
    fn collect(&self) -> Option<Values> {
        let mut out: Vec<(&str, Option<Reading>)> = Vec::new();
        let mut p = 0;
        for (i, part) in self.parts.iter().enumerate() {
            let q = self.memo.get(&(i, p)).copied().flatten().expect("fit recorded every chosen span");
            if let Part::Expression(e) = part {
                let values = parse_expression(e, &self.uri[p..q]).expect("fit checked this span");
                for (v, value) in e.vars.iter().zip(values) {
                    let new = value.map(|x| (x, v.prefix));
                    match out.iter_mut().find(|(n, _)| *n == v.name) {
                        None => out.push((v.name, new)),
                        Some((_, seen)) => *seen = merge(seen.take(), new)?,
                    }
                }
            }
            p = q;
        }
        Some(Values(out.into_iter().filter_map(|(n, v)| v.map(|(v, _)| (n.to_owned(), v))).collect()))
    }

    /// Can parts `i..` match `uri[p..]`? Records the chosen span of part `i` at `p`.
    fn fit(&mut self, i: usize, p: usize) -> Result<bool, TemplateError> {
        if i == self.parts.len() {
            return Ok(p == self.uri.len());
        }
        if let Some(known) = self.memo.get(&(i, p)) {
            return Ok(known.is_some());
        }
        self.step(1)?;
        let parts = self.parts;
        let chosen = match &parts[i] {
            Part::Literal(l) => {
                self.step(l.len())?;
                match match_literal(l, self.uri.as_bytes(), p) {
                    Some(q) if self.fit(i + 1, q)? => Some(q),
                    _ => None,
                }
            }
            Part::Expression(e) => self.expression(i, e, p)?,
        };
        self.memo.insert((i, p), chosen);
        Ok(chosen.is_some())
    }

    /// The longest span of expression `e` at `p` that lets the rest match.
    fn expression(&mut self, i: usize, e: &Expression<'_>, p: usize) -> Result<Option<usize>, TemplateError> {
        let ends = span_ends(e.op, self.uri, p);
        self.step(ends.len())?;
        for &q in ends.iter().rev() {
            self.step(1)?;
            if !self.fit(i + 1, q)? {
                continue;
            }
            self.step(q - p)?;
            if parse_expression(e, &self.uri[p..q]).is_some() {
                return Ok(Some(q));
            }
        }
        Ok(None)
    }
}

/// A variable's value as one expression read it, with the prefix modifier it was read under.
type Reading = (Value, Option<u16>);

/// Two readings of one variable: `None` when they disagree.
fn merge(a: Option<Reading>, b: Option<Reading>) -> Option<Option<Reading>> {
    let (Some(a), Some(b)) = (&a, &b) else { return Some(a.or(b)) };
    if a.0 == b.0 {
        // The same text: keep the reading with the weaker bound (no prefix beats any prefix).
        let looser = match (a.1, b.1) {
            (None, _) => a,
            (_, None) => b,
            (Some(m), Some(n)) => {
                if m >= n {
                    a
                } else {
                    b
                }
            }
        };
        return Some(Some(looser.clone()));
    }
    let (Value::String(x), Value::String(y)) = (&a.0, &b.0) else { return None };
    // A prefixed reading is the first n characters of the other.
    let fits = |short: &str, n: Option<u16>, long: &str| {
        n.is_some_and(|n| {
            long.chars().take(usize::from(n)).eq(short.chars()) && short.chars().count() == usize::from(n)
        })
    };
    if fits(x, a.1, y) {
        Some(Some(b.clone()))
    } else if fits(y, b.1, x) {
        Some(Some(a.clone()))
    } else {
        None
    }
}

/// The length of the URI unit at `p` that may appear inside an expansion of `op` (after its first
/// character): a pct-encoded triplet, an allowed ASCII character, or a non-ASCII IRI character
/// (`ucschar`/`iprivate`, not invisible); 0 when none.
fn unit(op: Operator, uri: &str, p: usize) -> usize {
    let b = uri.as_bytes();
    let Some(&x) = b.get(p) else { return 0 };
    if x == b'%' {
        return if triplet_at(b, p).is_some() { 3 } else { 0 };
    }
    if x.is_ascii() {
        let ok =
            is_unreserved(x) || if op.reserved() { is_reserved(x) } else { x == b',' || x == b'=' || x == op.sep() };
        return usize::from(ok);
    }
    match uri[p..].chars().next() {
        Some(c) if (is_ucschar(c) || is_iprivate(c)) && !sanitize::is_forbidden_invisible(c) => c.len_utf8(),
        _ => 0,
    }
}

/// Every end position of a span of `op` starting at `p`, ascending (`p` itself: the empty span).
fn span_ends(op: Operator, uri: &str, p: usize) -> Vec<usize> {
    let mut ends = vec![p];
    let mut q = p;
    if let Some(first) = op.first() {
        if uri.as_bytes().get(p) != Some(&first) {
            return ends;
        }
        q += 1;
        ends.push(q);
    }
    loop {
        let n = unit(op, uri, q);
        if n == 0 {
            return ends;
        }
        q += n;
        ends.push(q);
    }
}

/// The byte of the pct-encoded triplet at `b[p..]`, if there is one.
fn triplet_at(b: &[u8], p: usize) -> Option<u8> {
    match b.get(p..p + 3)? {
        [b'%', h, l] => hex_byte(*h, *l),
        _ => None,
    }
}

/// Matches literal `l` at `uri[p..]`: its expanded form, where an unreserved or non-ASCII character
/// may also appear pct-encoded (hex digits in either case), and a triplet of the template may also
/// appear as the unreserved character it encodes. Returns the end.
fn match_literal(l: &str, uri: &[u8], mut p: usize) -> Option<usize> {
    let lb = l.as_bytes();
    let mut i = 0;
    while i < lb.len() {
        if let Some(want) = triplet_at(lb, i) {
            // Triplets of a UTF-8 character may also appear as the raw character.
            if let Some(c) = (want >= 0x80).then(|| decode_one(lb, i)).flatten() {
                let mut buf = [0u8; 4];
                let raw = c.encode_utf8(&mut buf).as_bytes();
                if uri.get(p..p + raw.len()) == Some(raw) {
                    p += raw.len();
                    i += 3 * raw.len();
                    continue;
                }
            }
            p = if triplet_at(uri, p) == Some(want) {
                p + 3
            } else if is_unreserved(want) && uri.get(p) == Some(&want) {
                p + 1
            } else {
                return None;
            };
            i += 3;
        } else if lb[i].is_ascii() {
            let c = lb[i];
            p = if uri.get(p) == Some(&c) {
                p + 1
            } else if is_unreserved(c) && triplet_at(uri, p) == Some(c) {
                p + 3
            } else {
                return None;
            };
            i += 1;
        } else {
            let n = l[i..].chars().next().map_or(1, char::len_utf8);
            if uri.get(p..p + n) == Some(&lb[i..i + n]) {
                p += n;
            } else {
                for &b in &lb[i..i + n] {
                    if triplet_at(uri, p) != Some(b) {
                        return None;
                    }
                    p += 3;
                }
            }
            i += n;
        }
    }
    Some(p)
}

fn hex_byte(h: u8, l: u8) -> Option<u8> {
    let v = |x: u8| (x as char).to_digit(16).map(|d| d as u8);
    Some((v(h)? << 4) | v(l)?)
}

/// Pct-decodes `s`. Runs of triplets that form valid UTF-8 become characters; with `reserved`,
/// only characters that reserved expansion would have encoded (not unreserved, not reserved, not
/// `%`) are decoded, so the value expands back to the same text. Invalid UTF-8 stays as written.
fn decode(s: &str, reserved: bool) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if triplet_at(b, i).is_none() {
            let c = s[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        match decode_one(b, i) {
            Some(c) if !(reserved && c.is_ascii() && (is_unreserved(c as u8) || is_reserved(c as u8) || c == '%')) => {
                out.push(c);
                i += 3 * c.len_utf8();
            }
            _ => {
                out.push_str(&s[i..i + 3]);
                i += 3;
            }
        }
    }
    out
}

/// The character that the run of triplets at `b[i..]` encodes in UTF-8, if they form one.
fn decode_one(b: &[u8], i: usize) -> Option<char> {
    let lead = triplet_at(b, i)?;
    let len = match lead {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let mut bytes = [lead, 0, 0, 0];
    for (k, slot) in bytes.iter_mut().enumerate().take(len).skip(1) {
        *slot = triplet_at(b, i + 3 * k)?;
    }
    std::str::from_utf8(&bytes[..len]).ok()?.chars().next()
}

/// One expression over its span: a value (or undefined) per variable, or `None` when the span is
/// not an expansion of it.
fn parse_expression(e: &Expression<'_>, span: &str) -> Option<Vec<Option<Value>>> {
    let values = if e.op.named() { parse_named(e, span)? } else { parse_unnamed(e, span)? };
    // Prefix modifiers: a string of at most that many characters.
    for (v, value) in e.vars.iter().zip(&values) {
        if let (Some(n), Some(value)) = (v.prefix, value) {
            match value {
                Value::String(s) if s.chars().count() <= usize::from(n) => {}
                _ => return None,
            }
        }
    }
    Some(values)
}

fn parse_unnamed(e: &Expression<'_>, span: &str) -> Option<Vec<Option<Value>>> {
    let k = e.vars.len();
    let mut out: Vec<Option<Value>> = vec![None; k];
    let reserved = e.op.reserved();
    let body = match e.op.first() {
        Some(f) => {
            if span.is_empty() {
                return Some(out);
            }
            span.strip_prefix(f as char)?
        }
        None => {
            if span.is_empty() {
                // An empty span: the first variable is the empty string.
                if !e.vars[0].explode {
                    out[0] = Some(Value::String(String::new()));
                }
                return Some(out);
            }
            span
        }
    };
    let sep = e.op.sep() as char;
    let items: Vec<&str> = body.split(sep).collect();
    // One item per variable from the left; extra items go to the first exploded variable, or,
    // when the separator may also occur inside a value (`,` between list members, `.` an
    // unreserved character), to the last variable.
    let mut counts: Vec<usize> = (0..k).map(|j| usize::from(j < items.len())).collect();
    if items.len() > k {
        let extra = items.len() - k;
        let target = match e.vars.iter().position(|v| v.explode) {
            Some(j) => j,
            None if sep == ',' || sep == '.' => k - 1,
            None => return None,
        };
        counts[target] += extra;
    }
    let mut at = 0;
    for (j, v) in e.vars.iter().enumerate() {
        let taken = &items[at..at + counts[j]];
        at += counts[j];
        out[j] = match taken {
            [] => None,
            _ if v.explode => Some(exploded(taken, reserved)),
            [one] if !reserved && sep != ',' && one.contains(',') => {
                Some(Value::List(one.split(',').map(|x| decode(x, false)).collect()))
            }
            [one] => Some(Value::String(decode(one, reserved))),
            many if sep == '.' => {
                let joined = many.join(".");
                Some(if joined.contains(',') {
                    Value::List(joined.split(',').map(|x| decode(x, false)).collect())
                } else {
                    Value::String(decode(&joined, false))
                })
            }
            many if reserved => Some(Value::String(decode(&many.join(","), true))),
            many => Some(Value::List(many.iter().map(|x| decode(x, false)).collect())),
        };
    }
    Some(out)
}

/// An exploded variable's items: an associative array when every item is `name=value`, else a list.
fn exploded(items: &[&str], reserved: bool) -> Value {
    if items.iter().all(|i| i.contains('=')) {
        Value::Assoc(
            items
                .iter()
                .map(|i| {
                    let (k, v) = i.split_once('=').expect("checked");
                    (decode(k, reserved), decode(v, reserved))
                })
                .collect(),
        )
    } else {
        Value::List(items.iter().map(|i| decode(i, reserved)).collect())
    }
}

fn parse_named(e: &Expression<'_>, span: &str) -> Option<Vec<Option<Value>>> {
    let k = e.vars.len();
    let mut out: Vec<Option<Value>> = vec![None; k];
    if span.is_empty() {
        return Some(out);
    }
    let body = span.strip_prefix(e.op.first().expect("named operators have one") as char)?;
    let path_param = e.op == Operator::PathParam;
    // `name=value` pairs; `;name` alone means an empty value (`{;x}`), while `?`/`&` always write `=`.
    let mut pairs = Vec::new();
    for pair in body.split(e.op.sep() as char) {
        match pair.split_once('=') {
            Some((n, v)) => pairs.push((n, v)),
            None if path_param => pairs.push((pair, "")),
            None => return None,
        }
    }
    let mut at = 0;
    for (j, v) in e.vars.iter().enumerate() {
        let Some(&(name, value)) = pairs.get(at) else { break };
        if !v.explode {
            if name == v.name {
                out[j] = Some(if value.contains(',') {
                    Value::List(value.split(',').map(|x| decode(x, false)).collect())
                } else {
                    Value::String(decode(value, false))
                });
                at += 1;
            }
            continue;
        }
        if name == v.name {
            // A list: every following pair under the variable's own name.
            let mut items = Vec::new();
            while let Some(&(_, x)) = pairs.get(at).filter(|(n, _)| *n == v.name) {
                items.push(decode(x, false));
                at += 1;
            }
            out[j] = Some(Value::List(items));
        } else {
            // An associative array: the pairs up to one named like a later variable.
            let later: Vec<&str> = e.vars[j + 1..].iter().map(|v| v.name).collect();
            let mut members = Vec::new();
            while let Some(&(n, x)) = pairs.get(at).filter(|(n, _)| !later.contains(n)) {
                members.push((decode(n, false), decode(x, false)));
                at += 1;
            }
            if !members.is_empty() {
                out[j] = Some(Value::Assoc(members));
            }
        }
    }
    (at == pairs.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_sets_hold_the_grammars_bytes() {
        for b in 0..=255u8 {
            let literal =
                matches!(b, 0x21 | 0x23..=0x24 | 0x26..=0x3B | 0x3D | 0x3F..=0x5B | 0x5D | 0x5F | 0x61..=0x7A | 0x7E);
            assert_eq!(is_ascii_literal(b), literal, "{b:#04x}");
            assert_eq!(is_ascii_varchar(b), b.is_ascii_alphanumeric() || b == b'_', "{b:#04x}");
        }
    }

    #[test]
    fn rfc6570_templates() {
        for ok in [
            "file:///{path}",
            "mem://t{i}/{id}",
            "http://e.com/{+path}/here{?q,lang}{&x*}{#frag:3}",
            "{/list*}{;keys}{.dom}",
            "x/{var.sub}/{a%20b}",
            "ü/{x}",
            "",
            "%41{x:9999}",
            "'{var}'",
        ] {
            assert_eq!(check_uri_template(ok), Ok(()), "{ok}");
        }
        for bad in [
            "{",
            "}",
            "{}",
            "{x",
            "a}b",
            "{=x}",
            "{x:0}",
            "{x:10000}",
            "{x,}",
            "{.x.}",
            "%4",
            "%zz",
            "a b",
            "a\u{200E}b",
            "a\u{7}b",
            "<x>",
            "{x y}",
            "a\u{FFFD}",
            "\"{x}\"",
            "a`b",
        ] {
            assert!(check_uri_template(bad).is_err(), "{bad:?}");
        }
        assert_eq!(check_uri_template(&"a".repeat(2049)), Err(TemplateProblem::TooLong));
        assert_eq!(check_uri_template(&"a".repeat(2048)), Ok(()));
    }
}
