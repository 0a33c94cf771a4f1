/**
 * mcplens for Node: bounded, validated, sanitized discovery of an MCP server's resources and
 * resource templates over an MCP SDK `Client` (`@modelcontextprotocol/sdk` 1.x, or v2's
 * `@modelcontextprotocol/client` on either era), a per-server catalog kept current by list_changed,
 * the model-facing `ListMcpResourceTemplatesTool`, `ListMcpResourcesTool` and `ReadMcpResourceTool`, RFC 6570
 * `expand`/`matches`/`variables`, and operation tracking for MCP SDK servers (`track`).
 *
 * Every rule lives in the Rust core (the napi addon's loader, `../native.js`). This facade only drives the
 * SDK's I/O, reads the clock, converts values and maps errors.
 */
export {
  McplensError,
  Pager,
  coreVersion,
  errorCodes,
  hasResourcesCapability,
  listResourceTemplates,
  listResources,
  type Annotations,
  type Diagnostics,
  type ErrorCode,
  type Limits,
  type ListKind,
  type ListOptions,
  type Listing,
  type McpClient,
  type PagerOptions,
  type PagerRequest,
  type Resource,
  type ResourceTemplate,
  type SdkFailureKind,
  type Support,
} from './discovery.js';
export {
  Catalog,
  ToolCall,
  Refresher,
  listResourceTemplatesTool,
  listResourcesTool,
  readResourceTool,
  completeTemplateTool,
  resourceToolSpecs,
  toolSpec,
  type CatalogOptions,
  type Disposition,
  type Failure,
  type InvalidateReason,
  type ListChangedDecision,
  type ListenClosed,
  type ListTemplatesToolInput,
  type Liveness,
  type ReadOptions,
  type CompleteOptions,
  type RefreshOptions,
  type RefreshOutcome,
  type RefresherAction,
  type ServerStatus,
  type Status,
  type ToolInputSchema,
  type ToolSpec,
  type Want,
  type WatchableClient,
} from './catalog.js';
export {
  expand,
  matches,
  variables,
  type CatalogMatches,
  type TemplateMatch,
  type TemplateValue,
  type TemplateVariable,
} from './template.js';
export {
  Tracker,
  TrackingSession,
  callbackExporter,
  jsonlExporter,
  mcpcatExporter,
  otlpExporter,
  track,
  type Exporter,
  type ExporterStats,
  type Identity,
  type JsonRpcRequest,
  type Outcome,
  type TrackedEvent,
  type TrackerOptions,
  type TrackerStats,
} from './tracking.js';
