//! [`DeclaredClient`]: an rmcp client handler that answers the server's requests as its
//! capabilities declare them, like the SDK clients.

// rmcp marks roots deprecated (SEP-2577, a later revision); servers of the revisions that have
// roots still send `roots/list`, and they are the ones answered here.
#![allow(deprecated)]

use ::rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCreateRequestMethod, ErrorData,
    ListRootsRequestMethod, ListRootsResult,
};
use ::rmcp::service::RequestContext;
use ::rmcp::{ClientHandler, RoleClient};

/// The answer to a server's `roots/list` from a client with `config`: the empty list when it
/// declares `roots` (it has none to give), else -32601, as the TypeScript and Python SDK clients
/// answer a request for a capability they do not declare (rmcp's default answers an empty list).
pub fn answer_roots(config: &ClientConfig) -> Result<ListRootsResult, ErrorData> {
    match config.capabilities.roots {
        Some(_) => Ok(ListRootsResult::default()),
        None => Err(ErrorData::method_not_found::<ListRootsRequestMethod>()),
    }
}

/// The answer to a server's `elicitation/create` from a client with `config`: declined when it
/// declares `elicitation` (no one here to ask), else -32601.
pub fn answer_elicitation(config: &ClientConfig) -> Result<ElicitResult, ErrorData> {
    match config.capabilities.elicitation {
        Some(_) => Ok(ElicitResult::new(ElicitationAction::Decline)),
        None => Err(ErrorData::method_not_found::<ElicitationCreateRequestMethod>()),
    }
}

/// A plain client (`initialize` with its `ClientConfig`) whose answers follow what it declares:
/// `roots/list` and `elicitation/create` are -32601 unless declared ([`answer_roots`],
/// [`answer_elicitation`]); `sampling/createMessage` is -32601 (rmcp's default).
#[derive(Debug, Clone, Default)]
pub struct DeclaredClient(pub ClientConfig);

impl ClientHandler for DeclaredClient {
    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        answer_roots(&self.0)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        answer_elicitation(&self.0)
    }

    fn get_info(&self) -> ClientConfig {
        self.0.clone()
    }
}
