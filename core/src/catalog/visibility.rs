//! Which listing tools a host offers the model now: [`Catalog::visible_tools`].

use super::Catalog;

/// The templates listing tool's name (the tool module renders it from the catalog).
pub const LIST_RESOURCE_TEMPLATES_TOOL: &str = "ListMcpResourceTemplatesTool";

/// The concrete-resources listing tool's name.
pub const LIST_RESOURCES_TOOL: &str = "ListMcpResourcesTool";

const BOTH: [&str; 2] = [LIST_RESOURCE_TEMPLATES_TOOL, LIST_RESOURCES_TOOL];

impl Catalog {
    /// The listing tools a host should offer the model now: both
    /// ([`LIST_RESOURCE_TEMPLATES_TOOL`], [`LIST_RESOURCES_TOOL`]) while at least one server of
    /// the catalog is known to declare the `resources` capability — from its connection
    /// ([`Refresher::attach`](super::Refresher::attach)) or from a commit — and neither otherwise. A server whose connection closed, or that was cleared or
    /// removed, no longer counts. The answer changes only together with
    /// [`generation`](Catalog::generation): a host that remembers the generation it last saw
    /// asks again when it moves.
    pub fn visible_tools(&self) -> &'static [&'static str] {
        if self.any_declares_resources() {
            &BOTH
        } else {
            &[]
        }
    }
}
