// The ES module entry point: the very objects of the CommonJS entry (one McplensError class for both).
export {
  McplensError,
  Pager,
  coreVersion,
  hasResourcesCapability,
  listResourceTemplates,
  listResources,
} from './index.js';
export type * from './index.js';
