// The ES module entry point: the very objects of the CommonJS entry (one McplensError class for both).
export {
  Catalog,
  McplensError,
  Pager,
  RefreshTicket,
  coreVersion,
  hasResourcesCapability,
  listResourceTemplates,
  listResourceTemplatesTool,
  listResources,
  Tracker,
  TrackingSession,
  callbackExporter,
  jsonlExporter,
  mcpcatExporter,
  otlpExporter,
  track,
} from './index.js';
export type * from './index.js';
