/**
 * LangGraph.js runs (`@langchain/langgraph`, `@langchain/core`, optional peer dependencies) on the sixteen states.
 *
 * @module agent-state-machine/langgraph
 */
export { LangGraphMirror, langGraphMirror } from './LangGraphMirror';
export type { LangGraphMirrorOptions, LangGraphObserve } from './LangGraphMirrorOptions';
export type { LangGraphResumeValue } from './LangGraphApprovals';
export { modelResponseOf, usageOf } from './messageOf';
