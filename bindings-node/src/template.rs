//! RFC 6570 templates (`mcplens::template`) and `Catalog.matchUri` for Node. Values and results cross as JSON text (the facade's `JSON.stringify` keeps an object's
//! order, which is the associative array's order); every rule is the core's.

use mcplens::template::{self, TemplateError, Values};
use napi::bindgen_prelude::Error;
use napi_derive::napi;

use crate::{Code, JsonText, NativeCatalog, Result};

fn template_error(e: TemplateError) -> Error<Code> {
    Error::new(Code(e.code().as_str()), e.to_string())
}

/// Each variable of `template` as JSON text: `[{name, operator, explode, prefix}]`.
#[napi]
pub fn template_variables(template: String) -> Result<String> {
    let vars = template::variables(&template).map_err(template_error)?;
    Ok(serde_json::to_string(&vars).expect("variables always serialize"))
}

/// Expands `template` (RFC 6570 level 4) with the values in `valuesJson` (an object).
#[napi]
pub fn expand_template(template: String, values_json: String) -> Result<String> {
    let values = Values::from_json(&values_json).map_err(template_error)?;
    template::expand(&template, &values).map_err(template_error)
}

/// The values under which `template` expands to `uri`, as JSON text, or `null`.
#[napi]
pub fn match_template(template: String, uri: String) -> Result<Option<String>> {
    Ok(template::matches(&template, &uri).map_err(template_error)?.map(|v| v.to_json()))
}

/// Every cached template `uri` fits, as JSON text: `{matches: [{server, uriTemplate, name, values}], skipped}`.
#[napi(ts_return_type = "string")]
pub fn catalog_match_uri(catalog: &NativeCatalog, uri: String) -> Result<JsonText> {
    Ok(JsonText(catalog.lock().catalog().match_uri(&uri).map_err(template_error)?.to_json()))
}
