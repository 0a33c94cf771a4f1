//! Converters written for speed (the glue budget's `convert` role, capped at 300 code lines by
//! `tests/glue_budget.py`): each replaces a plain path through JS on a hot path, and a `make bench`
//! row prints what it saves against that plain path in the same run.
//!
//! - [`listing`]: a listing handed back as parts the facade assembles (`lib/convert.ts`) instead
//!   of its JSON text for `JSON.parse`; row `node_convert_listing` (`make bench-node`).

//! - [`tape`]: a page the SDK parsed, read in place from a tape (`lib/convert-tape.ts`'s `withTape`)
//!   instead of its `JSON.stringify`'d text; row `node_convert_page` (`make bench-node`).

pub mod listing;
pub mod tape;
