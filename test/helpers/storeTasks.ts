// The scripted tasks the store tests run (the contract suite and each store's own tests): a
// one-turn task whose two replies are priced, a task whose agent answers what is no response,
// and a batch's options on a manual clock with no waiting.
import { createScriptedAgent, type AgentLoop, type BatchOptions, type BatchTask } from '../../lib/index';
import { manualClock } from './manualClock';

export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
export const base = (): BatchOptions => ({ logger: false, sleep: () => tick(), clock: manualClock().now });

/** A one-turn agent: a tool call, then an answer, each reply priced ($0.01 and $0.02). */
export const script = (): AgentLoop =>
  createScriptedAgent({
    sleep: () => tick(),
    replies: [
      {
        toolCalls: [{ id: 'c1', name: 'look', input: {} }],
        usage: { costUsd: 0.01, inputTokens: 10, outputTokens: 5 },
      },
      { text: 'done', usage: { costUsd: 0.02, inputTokens: 12, outputTokens: 3 } },
    ],
    tools: { look: { output: 'seen' } },
  });
export const task = (id: string, agent: () => AgentLoop = script): BatchTask => ({ id, input: 'go', agent });
/** A task whose run ends in Error: its agent's reply is not a response. */
export const failing = (id: string): BatchTask =>
  task(id, () => createScriptedAgent({ sleep: () => tick(), replies: [{ raw: 'not a response' }] }));
