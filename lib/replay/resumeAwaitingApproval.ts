import type { AgentLoop, Pricing } from '../agent/AgentLoop';
import { isHookLine } from '../internal/isHookLine';
import { AgentWithStateMachine, type AgentWithStateMachineOptions } from '../agent/AgentWithStateMachine';
import type { TurnResult } from '../agent/TurnResult';
import type { ApprovalDecision } from '../agent/ApprovalGate';
import type { LoadedHistory } from '../history/loadHistory';
import { tableRoles } from '../history/tableRoles';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import { assertPricing } from '../agent/options/assertPricing';
import type { TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { ReplayDivergedError } from './ReplayDivergedError';
import { replayLoop } from './replayLoop';

/** A run picked up where another process left it waiting for approval. */
export interface ResumedApproval {
  /** The adapter, waiting for `approve` / `deny` on `result.pendingApprovals`, then `continueTurn()`. */
  agent: AgentWithStateMachine;
  /** The paused turn's result as the replay reached it: `awaiting_approval`, with the pending calls. */
  result: TurnResult;
}

/**
 * Picks up a run that another process left waiting for approval: `history` is its file
 * (`loadHistory(path)`, written with `journal: true`), `live` the loop to go on with. The
 * machine is re-driven from the journal — every recorded LLM call and tool call is answered
 * from it, none is made again — up to the AwaitingApproval where the file ends; from then on
 * `live` makes the calls. `options` are the adapter's (the same `table` and `approve` as the
 * first process; a new `sink` for the continued history). A `live` loop that keeps its own
 * conversation must hold it as the first process left it.
 */
export async function resumeAwaitingApproval(
  history: LoadedHistory,
  live: AgentLoop,
  options: AgentWithStateMachineOptions,
): Promise<ResumedApproval> {
  if (typeof history !== 'object' || history === null || !Array.isArray(history.records))
    throw new InvalidArgumentError('history', 'a loaded history (loadHistory(path))', history);
  // Wrapped below, so the adapter would only ever see a function: checked here, as it checks it.
  assertPricing(options?.pricing);
  const table = history.table ?? (DEFAULT_TABLE as TransitionTable<string>);
  const last = history.records.at(-1);
  if (last === undefined || !tableRoles(table).wait.has(last.to))
    throw new InvalidArgumentError(
      'history',
      'the history of a run that stopped waiting for approval (its last move into a waiting state)',
      last === undefined ? 'a history with no move' : `a history whose last move is ${last.from} → ${last.to}`,
    );
  const replay = replayLoop(history.journal);
  const recordedLLM = history.journal.filter((j) => j.type === 'llm' && !isHookLine(j)).length;
  const recordedTools = history.journal.filter((j) => j.type === 'tool' && j.status !== 'not_run').length;
  let tools = 0;
  const replaying = (): boolean => replay.llmCalls < recordedLLM;
  const userPricing = options.pricing;
  let liveCalls = 0;
  // Recorded responses are priced at their recorded cost; live ones by the caller's pricing.
  const pricing: Pricing = (usage, info) => (liveCalls > 0 ? userPricing?.(usage, info) : replay.pricing(usage, info));
  // The answers given in the first process, in order, for the pauses the replay passes again.
  const roles = tableRoles(table);
  const answered = history.records
    .filter((r) => roles.wait.has(r.from))
    .map((r) => (r.data as { decisions?: ApprovalDecision[] } | undefined)?.decisions ?? []);
  const loop: AgentLoop = {
    sendUserMessage: (message, ctx) =>
      replaying() ? replay.loop.sendUserMessage(message, ctx) : (liveCalls++, live.sendUserMessage(message, ctx)),
    sendToolResults: (results, messages, ctx) =>
      replaying()
        ? replay.loop.sendToolResults(results, messages, ctx)
        : (liveCalls++, live.sendToolResults(results, messages, ctx)),
    runTool: (call, ctx) => (tools++ < recordedTools ? replay.loop.runTool(call, ctx) : live.runTool(call, ctx)),
    checkGitCommits: async (ctx) => (replaying() ? [] : ((await live.checkGitCommits?.(ctx)) ?? [])),
    runAutoformatters: async (commits, ctx) => (replaying() ? [] : live.runAutoformatters?.(commits, ctx)),
    gatherAdditionalMessages: async (ctx) => (replaying() ? [] : ((await live.gatherAdditionalMessages?.(ctx)) ?? [])),
    ...(live.settleToolCalls === undefined
      ? {}
      : { settleToolCalls: (results, info, ctx) => live.settleToolCalls!(results, info, ctx) }),
    ...(live.compact === undefined ? {} : { compact: (info, ctx) => live.compact!(info, ctx) }),
  };
  const agent = new AgentWithStateMachine(loop, { ...options, table, pricing });
  let result: TurnResult | undefined;
  let pauses = 0;
  for (const input of replay.inputs) {
    result = await agent.runTurn(input);
    // A pause the first process got past: give the answers it gave, and go on.
    while (result.outcome === 'awaiting_approval' && pauses < answered.length) {
      for (const d of answered[pauses++]!) {
        if (d.approved) agent.approve(d.callId, 'input' in d ? { input: d.input } : {});
        else agent.deny(d.callId, d.reason);
      }
      result = await agent.continueTurn();
    }
    if (replay.diverged !== undefined) throw replay.diverged;
    if (result.outcome === 'awaiting_approval') break;
  }
  if (result?.outcome !== 'awaiting_approval' || replaying())
    throw new ReplayDivergedError(
      replay.llmCalls,
      `the replay did not stop for approval where the file does (it ended ${result?.outcome ?? 'with no turn'})`,
    );
  return { agent, result };
}
