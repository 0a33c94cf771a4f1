//! # mcplens
//!
//! Bounded, validated, sanitized discovery of MCP (Model Context Protocol) resources and resource
//! templates for agents, and operation tracking for MCP servers.
//!
//! The rule modules are sans-IO: they never read a clock, never touch a socket and never spawn.
//! Hosts (the rmcp driver behind the `rmcp` feature, the Python and Node bindings) drive them; the
//! hosts' side of a catalog that every binding shares (its lock, its one driver, the seed read
//! from the process) is `catalog::SharedRefresher`, outside the rules.
//!
//! ## One method dialect
//!
//! Every machine speaks the same way, as quinn-proto's `Connection` does: what happened in the world
//! goes in through `handle_*` (with `now`, any monotonic reading), what the machine wants done
//! comes out through `poll_*`, and what the host asks of it are plain verbs. A host loops: hand it
//! each event, then drain `poll_*` until it returns `None`, then wait for the next event or
//! `poll_timeout`.
//!
//! | machine | commands | events in (`handle_*`) | out (`poll_*`) |
//! |---|---|---|---|
//! | [`Pager`] | `new`, `finish` | `handle_outcome`, `handle_parsed_page` | `poll_request`, `remaining` |
//! | [`catalog::Refresher`] | `attach`, `detach`, `watch`, `request`, `invalidate`, `remove` | `handle_pair`, `handle_traversed`, `handle_list_changed`, `handle_listen_acknowledged`, `handle_listen_closed`, `handle_timeout` | `poll_action`, `poll_timeout` |
//! | [`catalog::PairTraversal`] | `new`, `finish` | `handle_outcome`, `handle_parsed_page` | `poll_request`, `remaining` |
//! | [`tool::ReadCall`] | `new`, `from_json`, `finish` (with the outcome: the model's output) | — | `params_json`, `remaining` |
//! | [`proxy::Proxy`] | `new` | `handle_host`, `handle_upstream`, `handle_host_oversize`, `handle_upstream_oversize`, `handle_host_end`, `handle_timeout` | `poll_action`, `poll_timeout` |
//!
//! The bindings keep their languages' names (Python `next_request`, `accept_page`,
//! `on_list_changed`; Node `nextRequest`, `acceptPage`, `onListChanged`).
//!
//! ## Modules
//!
//! - [`backoff`]: the one jitter source and retry rule (the refresher's and the export queues').
//! - [`discovery`]: the [`Pager`] for `resources/list` and `resources/templates/list`.
//! - [`sanitize`]: untrusted text → safe text, and the RFC 6570 URI-template check.
//! - [`catalog`]: the per-server cache, refreshed as one transaction.
//! - [`tool`]: the `ListMcpResourceTemplatesTool` and `ListMcpResourcesTool` specs and rendering.
//! - [`template`]: RFC 6570 `variables`, `expand` (level 4) and `matches`, only when a caller asks.
//! - [`proxy`]: the rules of `mcplens proxy` (relay, resource tools, tracking records) as one
//!   sans-IO machine.
//! - [`tracking`]: server-side operation tracking ([`Tracker`](tracking::Tracker)): events,
//!   redaction, payload caps, bounded queue, exporters.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod backoff;
pub mod catalog;
pub mod discovery;
pub mod error;
pub(crate) mod millis;
pub mod protocol;
pub mod proxy;
pub mod sanitize;
pub mod template;
pub mod tool;
pub mod tracking;
mod version;

#[cfg(feature = "rmcp")]
pub mod rmcp;

pub use catalog::Catalog;
pub use discovery::{Diagnostics, DiscoveryError, Item, Limits, ListKind, Listing, Outcome, Pager, Request};
pub use error::ErrorCode;
pub use version::VERSION;

/// The README's Rust quickstart, compiled and run as a doctest so it stays true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
