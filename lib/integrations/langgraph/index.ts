// agent-state-machine/langgraph: LangGraph.js runs (`@langchain/langgraph`, `@langchain/core`, optional peer dependencies) on the sixteen states.
export { LangGraphMirror, langGraphMirror } from './LangGraphMirror';
export { modelResponseOf, usageOf } from './messageOf';
