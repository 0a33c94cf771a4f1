//! The traversal pair an [`Action::Traverse`](super::Action::Traverse) asks for, as one sans-IO
//! machine: every host (Python, Node, the rmcp driver, the proxy) performs its requests and hands
//! it back to [`Refresher::handle_pair`](super::Refresher::handle_pair); none of them decides
//! what the pair is.
//!
//! The rules, once: resources first, then templates, over the same connection; the templates list
//! is asked only when the resources list was (a server without the `resources` capability gets
//! no request, and both lists are empty); the first failure ends the pair (the templates list is
//! not asked after a resources failure); a pair handed back before it ended was abandoned by its
//! host (cancelled, the connection gone), and nothing of it is recorded.
//!
//! ```text
//! let mut pair = PairTraversal::new(traversal, server, capabilities, limits, version, now);
//! while let Some(request) = pair.poll_request() {
//!     // send it, waiting at most pair.remaining(now); then
//!     pair.handle_outcome(outcome, now);
//! }
//! refresher.handle_pair(pair, now);
//! ```

use std::time::Duration;

use super::{Disposition, Refresher, TraversalError, TraversalId};
use crate::discovery::{
    initialized, Diagnostics, DiscoveryError, ListKind, Listing, Outcome, Pager, Request, Support, Verbatim,
};

/// Both listings of one server over one connection. See the [module docs](self).
#[derive(Debug)]
pub struct PairTraversal {
    id: TraversalId,
    server: String,
    limits: crate::discovery::Limits,
    protocol_version: String,
    stage: Stage,
}

#[derive(Debug)]
enum Stage {
    Resources(Pager),
    Templates {
        resources: Listing,
        pager: Pager,
    },
    Done(Result<(Listing, Listing), DiscoveryError>),
    /// Only while [`PairTraversal::settle`] moves from one stage to the next.
    Moving,
}

impl PairTraversal {
    /// The pair of traversal `traversal` (from its [`Action::Traverse`](super::Action::Traverse))
    /// of `server`, starting at `now`, over a connection that negotiated `protocol_version` and
    /// whose server's capabilities are `capabilities_json` (JSON text; `None` while the client is
    /// not initialized: see [`initialized`](crate::discovery::initialized)). A client that is not
    /// initialized, or invalid `limits`, end it at once with their error.
    pub fn new(
        traversal: TraversalId,
        server: &str,
        capabilities_json: Option<&str>,
        limits: crate::discovery::Limits,
        protocol_version: &str,
        now: Duration,
    ) -> PairTraversal {
        let mut pair = PairTraversal {
            id: traversal,
            server: server.to_owned(),
            limits,
            protocol_version: protocol_version.to_owned(),
            stage: Stage::Moving,
        };
        let resources = initialized(server, capabilities_json);
        pair.stage = match resources.and_then(|declares| pair.pager(ListKind::Resources, declares, now)) {
            Ok(pager) => Stage::Resources(pager),
            Err(e) => Stage::Done(Err(e)),
        };
        pair.settle(now);
        pair
    }

    fn pager(&self, kind: ListKind, eligible: bool, now: Duration) -> Result<Pager, DiscoveryError> {
        Ok(Pager::new(kind, self.server.as_str(), eligible, self.limits, now)?
            .with_protocol_version(&self.protocol_version))
    }

    /// Moves on from a pager that ended: resources to templates (asked only when resources were
    /// listed), templates to the pair; a failure ends the pair.
    fn settle(&mut self, now: Duration) {
        loop {
            let stage = std::mem::replace(&mut self.stage, Stage::Moving);
            self.stage = match stage {
                Stage::Resources(pager) if pager.is_done() => match pager.finish() {
                    Ok(resources) => {
                        let eligible = resources.support != Support::NoCapability;
                        match self.pager(ListKind::ResourceTemplates, eligible, now) {
                            Ok(pager) => Stage::Templates { resources, pager },
                            Err(e) => Stage::Done(Err(e)),
                        }
                    }
                    Err(e) => Stage::Done(Err(e)),
                },
                Stage::Templates { resources, pager } if pager.is_done() => {
                    Stage::Done(pager.finish().map(|templates| (resources, templates)))
                }
                stage => {
                    self.stage = stage;
                    return;
                }
            };
        }
    }

    /// The traversal it performs (hand the pair back under this id).
    pub fn id(&self) -> TraversalId {
        self.id
    }

    /// The server.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The list being read, or `None` once the pair ended.
    pub fn kind(&self) -> Option<ListKind> {
        match &self.stage {
            Stage::Resources(p) | Stage::Templates { pager: p, .. } => Some(p.kind()),
            Stage::Done(_) | Stage::Moving => None,
        }
    }

    /// The next request to send, or `None` once the pair ended (hand it back).
    pub fn poll_request(&mut self) -> Option<Request> {
        self.current()?.poll_request()
    }

    /// Time left for the list being read at `now`: the host's timeout for the request in flight.
    pub fn remaining(&self, now: Duration) -> Duration {
        match &self.stage {
            Stage::Resources(p) | Stage::Templates { pager: p, .. } => p.remaining(now),
            Stage::Done(_) | Stage::Moving => Duration::ZERO,
        }
    }

    /// True once both lists were read, or one failed.
    pub fn is_done(&self) -> bool {
        !matches!(self.stage, Stage::Resources(_) | Stage::Templates { .. })
    }

    /// The answer to the request from [`poll_request`](Self::poll_request), received at `now`
    /// ([`Pager::handle_outcome`]). A failure ends the pair, which keeps it for its refresher:
    /// the error returned is the host's misuse only (no request in flight, the pair ended).
    pub fn handle_outcome(&mut self, outcome: Outcome<'_>, now: Duration) -> Result<(), DiscoveryError> {
        let result = match self.current() {
            Some(pager) => {
                pager.handle_outcome(outcome, now).or_else(|e| if pager.is_done() { Ok(()) } else { Err(e) })
            }
            None => Err(self.ended()),
        };
        self.settle(now);
        result
    }

    /// [`Pager::handle_parsed_page`] for the list being read: `Ok(false)` when nothing was applied
    /// (hand the page's JSON text to [`handle_outcome`](Self::handle_outcome)); errors as there.
    pub fn handle_parsed_page<'de, D: serde::Deserializer<'de>>(
        &mut self,
        page: D,
        now: Duration,
    ) -> Result<bool, DiscoveryError> {
        let result = match self.current() {
            Some(pager) => {
                pager.handle_parsed_page(page, now).or_else(|e| if pager.is_done() { Ok(true) } else { Err(e) })
            }
            None => Err(self.ended()),
        };
        self.settle(now);
        result
    }

    /// What the list being read has counted so far (`None` once the pair ended).
    pub fn diagnostics(&self) -> Option<&Diagnostics> {
        match &self.stage {
            Stage::Resources(p) | Stage::Templates { pager: p, .. } => Some(p.diagnostics()),
            Stage::Done(_) | Stage::Moving => None,
        }
    }

    /// Both listings or the first failure once the pair ended; `None` when it had not (its host
    /// stopped performing it: abandoned).
    pub fn finish(self) -> Option<Result<(Listing, Listing), DiscoveryError>> {
        match self.stage {
            Stage::Done(result) => Some(result),
            Stage::Resources(_) | Stage::Templates { .. } | Stage::Moving => None,
        }
    }

    fn current(&mut self) -> Option<&mut Pager> {
        match &mut self.stage {
            Stage::Resources(p) | Stage::Templates { pager: p, .. } => Some(p),
            Stage::Done(_) | Stage::Moving => None,
        }
    }

    fn ended(&self) -> DiscoveryError {
        DiscoveryError::InvalidState { server: self.server.clone(), reason: "the traversal pair has ended" }
    }
}

/// What a host drives page by page behind one handle: one list ([`Pager`], finished by the host)
/// or a pair ([`PairTraversal`], handed back to its refresher). The bindings' pager classes hold
/// one, so both are performed by the same loop.
#[derive(Debug)]
#[allow(clippy::large_enum_variant, reason = "one per traversal, held behind a host's object: never copied")]
pub enum Paging {
    /// One list of one server.
    One(Pager),
    /// A refresher's pair.
    Pair(PairTraversal),
}

impl Paging {
    /// The server.
    pub fn server(&self) -> &str {
        match self {
            Paging::One(p) => p.server(),
            Paging::Pair(p) => p.server(),
        }
    }

    /// The list being read (`None` once a pair ended).
    pub fn kind(&self) -> Option<ListKind> {
        match self {
            Paging::One(p) => Some(p.kind()),
            Paging::Pair(p) => p.kind(),
        }
    }

    /// [`Pager::poll_request`] / [`PairTraversal::poll_request`].
    pub fn poll_request(&mut self) -> Option<Request> {
        match self {
            Paging::One(p) => p.poll_request(),
            Paging::Pair(p) => p.poll_request(),
        }
    }

    /// [`Pager::remaining`] / [`PairTraversal::remaining`].
    pub fn remaining(&self, now: Duration) -> Duration {
        match self {
            Paging::One(p) => p.remaining(now),
            Paging::Pair(p) => p.remaining(now),
        }
    }

    /// [`Pager::is_done`] / [`PairTraversal::is_done`].
    pub fn is_done(&self) -> bool {
        match self {
            Paging::One(p) => p.is_done(),
            Paging::Pair(p) => p.is_done(),
        }
    }

    /// [`Pager::handle_outcome`] / [`PairTraversal::handle_outcome`] (a pair keeps its failure).
    pub fn handle_outcome(&mut self, outcome: Outcome<'_>, now: Duration) -> Result<(), DiscoveryError> {
        match self {
            Paging::One(p) => p.handle_outcome(outcome, now),
            Paging::Pair(p) => p.handle_outcome(outcome, now),
        }
    }

    /// [`Pager::handle_parsed_page`] / [`PairTraversal::handle_parsed_page`].
    pub fn handle_parsed_page<'de, D: serde::Deserializer<'de>>(
        &mut self,
        page: D,
        now: Duration,
    ) -> Result<bool, DiscoveryError> {
        match self {
            Paging::One(p) => p.handle_parsed_page(page, now),
            Paging::Pair(p) => p.handle_parsed_page(page, now),
        }
    }

    /// [`Pager::handle_parsed_page_noting`]; a pair notes nothing.
    pub fn handle_parsed_page_noting<'de, D: serde::Deserializer<'de>>(
        &mut self,
        page: D,
        now: Duration,
        noted: &mut Vec<Verbatim>,
        min_len: usize,
    ) -> Result<bool, DiscoveryError> {
        match self {
            Paging::One(p) => p.handle_parsed_page_noting(page, now, noted, min_len),
            Paging::Pair(p) => p.handle_parsed_page(page, now),
        }
    }

    /// What the list being read has counted so far.
    pub fn diagnostics(&self) -> Option<&Diagnostics> {
        match self {
            Paging::One(p) => Some(p.diagnostics()),
            Paging::Pair(p) => p.diagnostics(),
        }
    }
}

impl Refresher {
    /// A [`PairTraversal`] handed back by its host: ended (both listings, or the first failure)
    /// or not (abandoned: nothing recorded). [`handle_traversed`](Refresher::handle_traversed) with
    /// the pair's result.
    pub fn handle_pair(&mut self, pair: PairTraversal, now: Duration) -> Disposition {
        let id = pair.id();
        match pair.finish() {
            Some(Ok((resources, templates))) => self.handle_traversed(id, Ok((&resources, &templates)), now),
            Some(Err(e)) => self.handle_traversed(id, Err(TraversalError::from(&e)), now),
            None => self.handle_traversed(id, Err(TraversalError::Abandoned), now),
        }
    }
}
