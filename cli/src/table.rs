//! Plain-text tables sized to the terminal. Cells come from the core's listing, so every string
//! is already sanitized; here runs of whitespace (descriptions keep `\n` and `\t`) become one
//! space, and cells are cut on display width with `…`.

use mcplens::discovery::Listing;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The width used when neither `$COLUMNS` nor the terminal says.
pub const DEFAULT_WIDTH: usize = 100;

/// The description column never gets narrower than this (the line overflows instead).
const MIN_FLEX: usize = 12;

const GAP: &str = "  ";

/// `$COLUMNS` when it is a positive number, else the width of the terminal on stdout, else
/// [`DEFAULT_WIDTH`].
pub fn terminal_width() -> usize {
    if let Some(n) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|&n| n > 0) {
        return n;
    }
    terminal_size::terminal_size_of(std::io::stdout()).map_or(DEFAULT_WIDTH, |(w, _)| usize::from(w.0))
}

/// The resource templates of `listing` as a table: server, URI template, name, MIME type,
/// description.
pub fn templates(listing: &Listing, width: usize) -> String {
    let rows = listing
        .templates()
        .map(|t| {
            vec![
                t.server.to_string(),
                t.uri_template.to_string(),
                t.name.to_string(),
                t.mime_type.as_deref().unwrap_or_default().to_owned(),
                t.description.as_deref().unwrap_or_default().to_owned(),
            ]
        })
        .collect();
    render(
        &["SERVER", "URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"],
        &[Some(24), None, Some(32), Some(24)],
        rows,
        width,
    )
}

/// The resources of `listing` as a table: server, URI, name, MIME type, size, description.
pub fn resources(listing: &Listing, width: usize) -> String {
    let rows = listing
        .resources()
        .map(|r| {
            vec![
                r.server.to_string(),
                r.uri.to_string(),
                r.name.to_string(),
                r.mime_type.as_deref().unwrap_or_default().to_owned(),
                r.size.map(|s| s.to_string()).unwrap_or_default(),
                r.description.as_deref().unwrap_or_default().to_owned(),
            ]
        })
        .collect();
    render(
        &["SERVER", "URI", "NAME", "MIME TYPE", "SIZE", "DESCRIPTION"],
        &[Some(24), None, Some(32), Some(24), None],
        rows,
        width,
    )
}

/// Renders `rows` under `headers`. `caps` bounds every column but the last (`None`: never cut;
/// URIs and URI templates are shown whole); the last column gets what is left of `width`.
/// No rows: an empty string.
fn render(headers: &[&str], caps: &[Option<usize>], rows: Vec<Vec<String>>, width: usize) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let last = headers.len() - 1;
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| {
            row.into_iter()
                .enumerate()
                .map(|(i, cell)| {
                    let cell = one_line(&cell);
                    match caps.get(i).copied().flatten() {
                        Some(cap) if i < last => cut(&cell, cap),
                        _ => cell,
                    }
                })
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.width()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate().take(last) {
            widths[i] = widths[i].max(cell.width());
        }
    }
    let fixed: usize = widths[..last].iter().sum::<usize>() + GAP.len() * last;
    let flex = width.saturating_sub(fixed).max(MIN_FLEX);

    let mut out = String::new();
    let header: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows.iter()) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i < last {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[i] - cell.width()));
                line.push_str(GAP);
            } else {
                line.push_str(&cut(cell, flex));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Runs of whitespace (the `\n`/`\t` a description keeps, among others) become one space.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` cut to at most `max` columns of display width, ending in `…` when cut.
fn cut(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_display_width() {
        assert_eq!(cut("abcdef", 6), "abcdef");
        assert_eq!(cut("abcdefg", 6), "abcde…");
        assert_eq!(cut("日本語の説明", 7), "日本語…");
        assert_eq!(cut("x", 0), "…");
    }

    #[test]
    fn last_column_fills_the_width() {
        let rows = vec![vec!["a".to_owned(), "b".repeat(50)]];
        let text = render(&["H1", "H2"], &[None], rows, 30);
        let line = text.lines().nth(1).unwrap();
        assert_eq!(line.width(), 30);
        assert!(line.ends_with('…'));
    }

    #[test]
    fn descriptions_become_one_line() {
        assert_eq!(one_line("one\ntwo\t three "), "one two three");
    }
}
