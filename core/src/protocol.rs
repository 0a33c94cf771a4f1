//! MCP's names that every front door uses as they are: methods, notifications, `_meta` keys and
//! the 2026-07-28 HTTP routing headers. Written once here; the bindings export them (Python
//! `_core.PROTOCOL`, Node `protocol`) rather than retype them.

/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";

/// `notifications/resources/list_changed`.
pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";

/// `subscriptions/listen` (2026-07-28).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

/// `notifications/subscriptions/acknowledged` (2026-07-28): a listen stream is open.
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// The `_meta` key naming the `subscriptions/listen` request whose stream carries a notification.
pub const SUBSCRIPTION_ID: &str = crate::discovery::meta::SUBSCRIPTION_ID;

/// The 2026-07-28 HTTP header naming a request's method (lower case, as `http` header names are).
pub const HEADER_MCP_METHOD: &str = "mcp-method";

/// The 2026-07-28 HTTP header naming a request's tool, prompt or resource.
pub const HEADER_MCP_NAME: &str = "mcp-name";
