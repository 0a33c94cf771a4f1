//! Routing a URI to the templates of the catalog that it fits: [`Catalog::match_uri`].

use serde::Serialize;

use super::Catalog;
use crate::discovery::Text;
use crate::template::{Template, TemplateError, Values, MATCH_STEPS, MAX_URI_BYTES};

/// One template of the catalog that a URI fits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateMatch {
    /// The server the template came from: route the read there.
    pub server: Text,
    /// The template, exactly as the server sent it.
    pub uri_template: Text,
    /// The template's (sanitized) name.
    pub name: Text,
    /// The values under which the template expands to the URI.
    pub values: Values,
}

/// What [`Catalog::match_uri`](Catalog::match_uri) found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CatalogMatches {
    /// Every match, most specific first (see [`Catalog::match_uri`](Catalog::match_uri)).
    pub matches: Vec<TemplateMatch>,
    /// Templates not tried to the end because matching them gave up (`match_limit`) or the call's
    /// whole budget ([`CATALOG_MATCH_STEPS`]) ran out: counted, never silently dropped.
    pub skipped: usize,
}

impl CatalogMatches {
    /// As compact JSON text: `{"matches":[{"server","uriTemplate","name","values"}],"skipped":n}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("matches always serialize")
    }
}

/// The search budget of one [`Catalog::match_uri`](Catalog::match_uri) call, across all
/// templates (8 × [`MATCH_STEPS`]).
pub const CATALOG_MATCH_STEPS: u64 = 8 * MATCH_STEPS;

impl Catalog {
    /// Every cached template that `uri` fits, with the values, for routing a read to the server
    /// whose template it came from (or grouping URIs by template).
    ///
    /// Order: most specific first — more literal characters in the template — and, between
    /// equally specific templates, the catalog's order (servers in registration order, each
    /// server's templates in the server's order). Built on [`Catalog::templates`](Catalog::templates)
    /// only: it never reads a resource or contacts a server.
    pub fn match_uri(&self, uri: &str) -> Result<CatalogMatches, TemplateError> {
        self.match_uri_in(None, uri)
    }

    /// [`match_uri`](Catalog::match_uri) over one server's templates (`Some`, a server of the
    /// catalog) or every server's (`None`).
    pub(crate) fn match_uri_in(&self, server: Option<&str>, uri: &str) -> Result<CatalogMatches, TemplateError> {
        if uri.len() > MAX_URI_BYTES {
            return Err(TemplateError::UriTooLong { bytes: uri.len(), max: MAX_URI_BYTES });
        }
        let templates = self.templates(server).unwrap_or_default();
        let mut found: Vec<(usize, TemplateMatch)> = Vec::new();
        let mut out = CatalogMatches::default();
        let mut spent = 0u64;
        for t in &templates {
            let budget = MATCH_STEPS.min(CATALOG_MATCH_STEPS - spent);
            // Discovery kept only templates this parser accepts, so parsing cannot fail here.
            let Ok(parsed) = Template::parse(&t.uri_template) else {
                out.skipped += 1;
                continue;
            };
            if budget == 0 {
                out.skipped += 1;
                continue;
            }
            let (result, steps) = parsed.matches_within(uri, budget);
            spent += steps.min(budget);
            match result {
                Ok(Some(values)) => found.push((
                    parsed.literal_chars(),
                    TemplateMatch {
                        server: t.server.clone(),
                        uri_template: t.uri_template.clone(),
                        name: t.name.clone(),
                        values,
                    },
                )),
                Ok(None) => {}
                Err(_) => out.skipped += 1,
            }
        }
        found.sort_by_key(|m| std::cmp::Reverse(m.0));
        out.matches = found.into_iter().map(|(_, m)| m).collect();
        Ok(out)
    }
}
