/**
 * LangGraph.js runs (`@langchain/langgraph`, `@langchain/core`, optional peer dependencies) on the sixteen states.
 *
 * @module agent-state-machine/langgraph
 */
export {
  LangGraphMirror,
  langGraphMirror,
  type LangGraphMirrorOptions,
  type LangGraphObserve,
} from './LangGraphMirror';
export { modelResponseOf, usageOf } from './messageOf';
