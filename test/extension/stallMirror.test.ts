import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import type { ToolCall } from '../../lib/agent/AgentLoop';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { STALL_EXTENSION } from '../../lib/agent/extensionStates';
import { StepMirror } from '../../lib/agent/StepMirror';
import { StalledError } from '../../lib/agent/TurnError';
import { extendTable } from '../../lib/machine/extendTable';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

const read = (i: number): ScriptedReply => ({ toolCalls: [{ id: `c${i}`, name: 'read', input: { path: 'a.txt' } }] });
const REPLIES = [read(1), read(2), read(3), { text: 'n/a' }];
const movesOf = (m: { history(): ReadonlyArray<{ from: string; to: string }> }): string[] =>
  m.history().map((r) => `${r.from}→${r.to}`);

/** What a framework's loop over `replies` reports to the mirror; returns what the mirror refused, if anything. */
async function frameworkLoop(mirror: StepMirror, replies: ScriptedReply[]): Promise<unknown> {
  mirror.runStart('read a.txt');
  for (const { text, toolCalls } of replies) {
    const stop = await mirror.modelCallStart();
    if (stop !== undefined) return stop;
    mirror.modelResponse({ text, toolCalls });
    if (toolCalls === undefined) break;
    for (const call of toolCalls as ToolCall[]) {
      const refused = await mirror.toolStart(call);
      if (refused !== undefined) return refused;
      mirror.toolEnd(call.id, { output: 'same' });
    }
  }
  if (mirror.running) mirror.runEnd();
  return undefined;
}

describe('stall detection in the framework mirror', () => {
  it('a framework loop that repeats itself is stopped where the adapter stops it, with the same moves', async () => {
    const adapter = new AgentWithStateMachine(createScriptedAgent({ replies: REPLIES, tools: { read: {} } }), {
      table: extendTable(DEFAULT_TABLE, STALL_EXTENSION),
      logger: false,
      stall: { policy: 'stop' },
    });
    const turn = await adapter.runTurn('read a.txt');
    const mirror = new StepMirror({ logger: false, stall: true });
    const refused = await frameworkLoop(mirror, REPLIES);
    expect(mirror.result?.outcome).toBe('stalled');
    expect(turn.outcome).toBe('stalled');
    expect(movesOf(mirror.machine)).toEqual(movesOf(adapter.machine));
    expect(mirror.machine.current).toBe('StallStopped');
    // The framework's next hook is refused with the stall, which its loop throws.
    expect(refused).toBeInstanceOf(StalledError);
    expect((refused as StalledError).message).toBe(turn.error!.message);
    expect(mirror.machine.history().find((r) => (r.to as string) === 'Stalled')?.data).toEqual(
      adapter.machine.history().find((r) => (r.to as string) === 'Stalled')?.data,
    );
  });

  it('refuses a nudge by name (a framework loop takes no message from the mirror) and checks the rest as the adapter does', () => {
    expect(() => new StepMirror({ logger: false, stall: { policy: ['nudge', 'stop'] } })).toThrow(
      "Expected `stall.policy` to be 'stop' (a framework's loop takes no message from the mirror, so it cannot be nudged)",
    );
    expect(() => new StepMirror({ logger: false, stall: { policy: 'nudge' } })).toThrow(InvalidArgumentError);
    expect(() => new StepMirror({ logger: false, stall: { idleCalls: 0 } })).toThrow(
      'Expected `stall.idleCalls` to be a positive integer, or false (off), got `0`',
    );
    expect(() => new StepMirror({ logger: false, stall: 'yes' as never })).toThrow(
      'Expected `stall` to be true, false or an object',
    );
    // Off by default: the mirror's table stays the sixteen states.
    expect(
      (new StepMirror({ logger: false }).machine.table.states as Record<string, unknown>)['Stalled'],
    ).toBeUndefined();
  });
});
