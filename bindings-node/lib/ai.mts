// The ES module entry point of `mcplens/ai`: the very objects of its CommonJS entry.
export { resourceTools } from './ai.js';
