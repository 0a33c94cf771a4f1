//! The benchmark workload shared by `discovery.rs` and `page_instructions.rs`: the page of
//! `reference/baseline-discovery.md` (template i, description padded to 200 characters; 100
//! templates make 42,216 B, all ASCII; `accent` adds one "é" per description).

/// A `resources/templates/list` result of `n` templates starting at `start`.
pub fn page(start: usize, n: usize, next: Option<&str>, accent: bool) -> String {
    let items: Vec<String> = (start..start + n)
        .map(|i| {
            let mut d = format!("Template {i} resolves files under {{path}}; {}", if accent { "é " } else { "" });
            while d.len() < 200 {
                d.push_str("Lorem ipsum dolor sit amet. ");
            }
            d.truncate(200);
            format!(
                r#"{{"uriTemplate":"file:///{{path}}/x{i}","name":"template-{i}","title":"Template {i}","description":"{d}","mimeType":"text/plain","annotations":{{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"}}}}"#
            )
        })
        .collect();
    let cursor = next.map(|c| format!(r#","nextCursor":"{c}""#)).unwrap_or_default();
    format!(r#"{{"resourceTemplates":[{}]{cursor}}}"#, items.join(","))
}
