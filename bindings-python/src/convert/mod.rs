//! Converters written for speed (the glue budget's `convert` role, capped at 450 code lines by
//! `tests/glue_budget.py`): each replaces a plain path through Python (pydantic's `model_dump`,
//! `json.dumps`, `pythonize`) on a hot path, and a `make bench` row prints what it saves against
//! that plain path in the same run.
//!
//! - [`values`]: a page as the SDK parsed it, read in place by the core (`Pager.accept_page_parsed`);
//!   row `python_convert_values` (`make bench-python`).
//! - [`json`]: the tracker's params and results as compact JSON; row `python_convert_tracking`
//!   (`make bench-python-tracking`).

pub(crate) mod json;
pub(crate) mod values;
