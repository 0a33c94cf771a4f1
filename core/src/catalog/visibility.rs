//! Which resource tools a host offers the model now: [`Catalog::visible_tools`].

use super::Catalog;

/// The templates listing tool's name (the tool module renders it from the catalog).
pub const LIST_RESOURCE_TEMPLATES_TOOL: &str = "ListMcpResourceTemplatesTool";

/// The concrete-resources listing tool's name.
pub const LIST_RESOURCES_TOOL: &str = "ListMcpResourcesTool";

/// The resource-reading tool's name.
pub const READ_RESOURCE_TOOL: &str = "ReadMcpResourceTool";

/// The template-completion tool's name.
pub const COMPLETE_TEMPLATE_TOOL: &str = "CompleteMcpResourceTemplateTool";

/// Every resource tool, in the order hosts offer them.
pub const RESOURCE_TOOLS: [&str; 4] =
    [LIST_RESOURCE_TEMPLATES_TOOL, LIST_RESOURCES_TOOL, READ_RESOURCE_TOOL, COMPLETE_TEMPLATE_TOOL];

impl Catalog {
    /// The resource tools a host should offer the model now: the three
    /// ([`LIST_RESOURCE_TEMPLATES_TOOL`], [`LIST_RESOURCES_TOOL`], [`READ_RESOURCE_TOOL`]) while at least one server of
    /// the catalog is known to declare the `resources` capability — from its connection
    /// ([`Refresher::attach`](super::Refresher::attach)) or from a commit — and none otherwise;
    /// [`COMPLETE_TEMPLATE_TOOL`] too while a server offers completion
    /// ([`offers_completion`](Catalog::offers_completion): it declares `completions` and lists a
    /// template). A server whose connection closed, or that was cleared or removed, no longer counts. The answer changes only together with
    /// [`generation`](Catalog::generation): a host that remembers the generation it last saw
    /// asks again when it moves.
    pub fn visible_tools(&self) -> &'static [&'static str] {
        if self.any_offers_completion() {
            &RESOURCE_TOOLS
        } else if self.any_declares_resources() {
            &RESOURCE_TOOLS[..3]
        } else {
            &[]
        }
    }
}
