"""mcplens: bounded, validated, sanitized discovery of MCP resources and resource templates.

One Rust core (`mcplens._core`) holds every rule; this package adds the glue for the official
`mcp` SDK (1.x and 2.x). Hosts on other SDKs drive `Pager` and a catalog's `Refresher`
themselves.
"""

from mcplens._catalog import Catalog, Watch
from mcplens._core import (
    COMPLETE_TEMPLATE_TOOL,
    LIST_RESOURCE_TEMPLATES_TOOL,
    LIST_RESOURCES_TOOL,
    READ_RESOURCE_TOOL,
    Annotations,
    CatalogError,
    CompleteConfig,
    DiscoveryError,
    Failure,
    Limits,
    Listing,
    McplensError,
    Pager,
    ReadConfig,
    RefreshConfig,
    Refresher,
    Request,
    Resource,
    ResourceTemplate,
    ServerStatus,
    TemplateError,
    ToolCall,
    ToolError,
    ToolSpec,
    __version__,
    expand,
    has_resources_capability,
    matches,
    tool_spec,
    variables,
)
from mcplens._mcp import list_resource_templates, list_resources
from mcplens._template import CatalogMatches, TemplateMatch, TemplateValue, TemplateVariable
from mcplens._tracking import (
    CallbackExporter,
    ExporterStats,
    JsonlExporter,
    McpcatExporter,
    OtlpExporter,
    Tracker,
    TrackerStats,
    TrackingError,
    track,
)

__all__ = [
    "LIST_RESOURCE_TEMPLATES_TOOL",
    "Annotations",
    "Catalog",
    "CatalogError",
    "DiscoveryError",
    "Failure",
    "Limits",
    "Listing",
    "McplensError",
    "Pager",
    "RefreshConfig",
    "Refresher",
    "Request",
    "Resource",
    "ResourceTemplate",
    "ServerStatus",
    "ToolError",
    "ToolSpec",
    "Watch",
    "__version__",
    "has_resources_capability",
    "list_resource_templates",
    "list_resources",
]
# URI templates.
__all__ += [
    "LIST_RESOURCES_TOOL",
    "CatalogMatches",
    "TemplateError",
    "TemplateMatch",
    "TemplateValue",
    "TemplateVariable",
    "expand",
    "matches",
    "variables",
]
# The tools that ask a server: the read and the completion.
__all__ += ["COMPLETE_TEMPLATE_TOOL", "READ_RESOURCE_TOOL", "CompleteConfig", "ReadConfig", "ToolCall", "tool_spec"]
# Server tracking.
__all__ += [
    "CallbackExporter",
    "ExporterStats",
    "JsonlExporter",
    "McpcatExporter",
    "OtlpExporter",
    "Tracker",
    "TrackerStats",
    "TrackingError",
    "track",
]
