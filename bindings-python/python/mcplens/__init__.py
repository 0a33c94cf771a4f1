"""mcplens: bounded, validated, sanitized discovery of MCP resources and resource templates.

One Rust core (`mcplens._core`) holds every rule; this package adds the glue for the official
`mcp` SDK (1.x and 2.x). Hosts on other SDKs drive `Pager` themselves.
"""

from mcplens._core import (
    Annotations,
    DiscoveryError,
    Limits,
    Listing,
    McplensError,
    Pager,
    Request,
    Resource,
    ResourceTemplate,
    __version__,
    has_resources_capability,
)
from mcplens._mcp import list_resource_templates, list_resources

__all__ = [
    "Annotations",
    "DiscoveryError",
    "Limits",
    "Listing",
    "McplensError",
    "Pager",
    "Request",
    "Resource",
    "ResourceTemplate",
    "__version__",
    "has_resources_capability",
    "list_resource_templates",
    "list_resources",
]
