// The ES module entry point of `mcplens/openai-agents`: the very objects of its CommonJS entry.
export { resourceTools } from './openai-agents.js';
