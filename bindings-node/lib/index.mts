// The ES module entry point: the very objects of the CommonJS entry (one McplensError class for both).
export {
  Catalog,
  McplensError,
  Pager,
  RefreshTicket,
  Refresher,
  coreVersion,
  hasResourcesCapability,
  listResourceTemplates,
  listResourceTemplatesTool,
  listResources,
  listResourcesTool,
  expand,
  matches,
  variables,
  Tracker,
  callbackExporter,
  jsonlExporter,
  mcpcatExporter,
  otlpExporter,
  track,
} from './index.js';
export type * from './index.js';
