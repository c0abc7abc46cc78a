/**
 * OpenAI Agents SDK runs (`@openai/agents`, an optional peer dependency) on the sixteen states.
 *
 * @module agent-state-machine/openai-agents
 */
export { AgentsMirror, agentsMirror } from './agentsMirror';
export { runStateOf } from './runStateOf';
export type { AgentsMirrorOptions } from './agentsMirror';
export type { AgentsRejectionMessage } from './AgentsApprovals';
export { responseOf, usageOf } from './responseOf';
export type { AgentsModelOutput, AgentsUsage } from './responseOf';
