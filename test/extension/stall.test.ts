import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import type { ToolCall } from '../../lib/agent/AgentLoop';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { STALL_EXTENSION } from '../../lib/agent/extensionStates';
import type { JournalEntry } from '../../lib/agent/journal/JournalEntry';
import type { StallDetector } from '../../lib/agent/stall/stallDetectors';
import { StalledError } from '../../lib/agent/TurnError';
import { extendTable } from '../../lib/machine/extendTable';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { InvalidTableError } from '../../lib/machine/InvalidTableError';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { manualClock } from '../helpers/manualClock';

const TABLE = extendTable(DEFAULT_TABLE, STALL_EXTENSION);

const call = (id: string, name: string, input: unknown): ToolCall => ({ id, name, input });
/** A reply asking for `read` of the same path: the loop that goes nowhere. */
const sameRead = (i: number, text?: string): ScriptedReply => ({
  ...(text === undefined ? {} : { text }),
  toolCalls: [call(`c${i}`, 'read', { path: 'a.txt' })],
});

function run(replies: ScriptedReply[], stall: unknown, extra: Record<string, unknown> = {}) {
  const records: TransitionRecord<string>[] = [];
  const journal: JournalEntry[] = [];
  const loop = createScriptedAgent({ replies, tools: { read: { output: 'same as before' }, ls: { output: 'a.txt' } } });
  const clock = manualClock();
  const agent = new AgentWithStateMachine(loop, {
    table: TABLE,
    stall,
    logger: false,
    clock: clock.now,
    sink: {
      write: (r: TransitionRecord<string>) => void records.push(r),
      journal: (e: unknown) => void journal.push(e as JournalEntry),
    },
    ...extra,
  } as never);
  return { agent, loop, records, journal };
}

const moves = (records: readonly TransitionRecord<string>[]): string[] => records.map((r) => `${r.from}>${r.to}`);
const sentMessages = (loop: ReturnType<typeof createScriptedAgent>): string[][] =>
  loop.calls.flatMap((c) => (c.op === 'sendToolResults' ? [c.messages] : []));

describe('stall detection (Stalled)', () => {
  it('the same tool call 3 times: the third nudges the model with the next results, the fourth stops the run', async () => {
    const { agent, loop, records } = run([sameRead(1), sameRead(2), sameRead(3), sameRead(4), { text: 'n/a' }], {
      repeatedText: false,
      idleCalls: false,
    });
    const result = await agent.runTurn('read a.txt');
    expect(result.outcome).toBe('stalled');
    expect(result.error).toBeInstanceOf(StalledError);
    expect(result.error!.message).toBe(
      'stalled (sameToolCall): the agent called read with the same input 4 times in this run: {"path":"a.txt"}',
    );
    // The nudge went with the results of the third call, and only there.
    const sent = sentMessages(loop);
    expect(sent).toHaveLength(3);
    expect(sent[0]).toEqual([]);
    expect(sent[1]).toEqual([]);
    expect(sent[2]).toEqual([
      'You seem to be stuck: you called read with the same input 3 times in this run: {"path":"a.txt"}. Doing it again will not help. Try a different approach, or stop and answer with what you have.',
    ]);
    const stalled = records.filter((r) => r.to === 'Stalled');
    expect(stalled.map((r) => r.data)).toEqual([
      {
        stall: {
          detector: 'sameToolCall',
          reason: 'called read with the same input 3 times in this run: {"path":"a.txt"}',
          evidence: { tool: 'read', input: { path: 'a.txt' }, count: 3 },
        },
        firing: 1,
        policy: 'nudge',
        nudge: sent[2]![0],
      },
      {
        stall: {
          detector: 'sameToolCall',
          reason: 'called read with the same input 4 times in this run: {"path":"a.txt"}',
          evidence: { tool: 'read', input: { path: 'a.txt' }, count: 4 },
        },
        firing: 2,
        policy: 'stop',
      },
    ]);
    expect(moves(records).slice(-3)).toEqual([
      'SendingToolResults>ProcessingLLMResponse',
      'ProcessingLLMResponse>Stalled',
      'Stalled>StallStopped',
    ]);
    expect(records.at(-1)!.data).toMatchObject({ outcome: 'stalled', detector: 'sameToolCall' });
    // After a nudge the turn goes on through the usual states.
    expect(moves(records)).toContain('Stalled>ToolUseRequested');
    // The fourth call never ran: it is answered as not run, so the conversation stays valid.
    expect(loop.calls.filter((c) => c.op === 'runTool')).toHaveLength(3);
    expect(result.unansweredToolCalls?.map((u) => u.result.output)).toEqual([`not run: ${result.error!.message}`]);
    expect(loop.remaining).toBe(1);
  });

  it('a model that changes course after the nudge is not stopped', async () => {
    const { agent, records } = run(
      [sameRead(1), sameRead(2), sameRead(3), { toolCalls: [call('c4', 'ls', { dir: '.' })] }, { text: 'done' }],
      true,
    );
    const result = await agent.runTurn('read a.txt');
    expect(result).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
    expect(records.filter((r) => r.to === 'Stalled')).toHaveLength(1);
  });

  it('the same text twice in a row fires repeatedText', async () => {
    const replies: ScriptedReply[] = [
      { text: 'Let me look.', toolCalls: [call('c1', 'read', { path: 'a' })] },
      { text: ' Let me look. ', toolCalls: [call('c2', 'read', { path: 'b' })] },
      { text: 'Let me look.', toolCalls: [call('c3', 'read', { path: 'c' })] },
    ];
    const { agent, records } = run(replies, { policy: 'stop' });
    const result = await agent.runTurn('go');
    expect(result.outcome).toBe('stalled');
    expect(records.find((r) => r.to === 'Stalled')!.data).toEqual({
      stall: {
        detector: 'repeatedText',
        reason: 'wrote the same text 2 times in a row: "Let me look."',
        evidence: { text: 'Let me look.', count: 2 },
      },
      firing: 1,
      policy: 'stop',
    });
  });

  it('idleCalls: n calls in a row with no new tool call fire, even when the repeats alternate', async () => {
    // a, b, a, b, …: no call is new after the second, and no single one is repeated 3 times before the 5th.
    const alternate = (i: number): ScriptedReply => ({
      toolCalls: [call(`c${i}`, 'read', { path: i % 2 === 0 ? 'a' : 'b' })],
    });
    const replies = [0, 1, 2, 3, 4, 5].map(alternate);
    const { agent, records } = run(replies, { sameToolCall: false, idleCalls: 3, policy: 'stop' });
    const result = await agent.runTurn('go');
    expect(result.outcome).toBe('stalled');
    expect(records.find((r) => r.to === 'Stalled')!.data).toMatchObject({
      stall: { detector: 'idleCalls', evidence: { calls: 3 } },
    });
    expect(records.filter((r) => r.to === 'ProcessingLLMResponse')).toHaveLength(5);
  });

  it('the default policy nudges then stops, with nudge and stop counted over the run, not the turn', async () => {
    const { agent } = run(
      [sameRead(1), { text: 'ok' }, sameRead(2), { text: 'ok' }, sameRead(3), { text: 'ok' }, sameRead(4)],
      { repeatedText: false },
    );
    expect((await agent.runTurn('1')).outcome).toBe('end_of_turn');
    expect((await agent.runTurn('2')).outcome).toBe('end_of_turn');
    expect((await agent.runTurn('3')).outcome).toBe('end_of_turn');
    const fourth = await agent.runTurn('4');
    expect(fourth.outcome).toBe('stalled');
    expect(agent.machine.current).toBe('StallStopped');
  });

  it('a policy list applies in order, its last entry to every later firing', async () => {
    const replies = [1, 2, 3, 4, 5, 6].map((i) => sameRead(i));
    const { agent, records } = run([...replies, { text: 'gave up' }], {
      repeatedText: false,
      idleCalls: false,
      policy: ['nudge'],
    });
    expect((await agent.runTurn('go')).outcome).toBe('end_of_turn');
    expect(records.filter((r) => r.to === 'Stalled').map((r) => (r.data as { firing: number }).firing)).toEqual([
      1, 2, 3, 4,
    ]);
  });

  it('custom detectors see the journal (with tool lines) and their finding is recorded', async () => {
    const seen: number[] = [];
    const errorsTwice: StallDetector = (journal) => {
      seen.push(journal.length);
      const failed = journal.filter((e) => e.type === 'tool' && e.result.isError === true);
      return failed.length >= 2
        ? { detector: 'toolErrors', reason: 'hit 2 tool errors', evidence: { errors: failed.length } }
        : undefined;
    };
    const loop = createScriptedAgent({
      replies: [
        { toolCalls: [call('c1', 'bad', { n: 1 })] },
        { toolCalls: [call('c2', 'bad', { n: 2 })] },
        { toolCalls: [call('c3', 'bad', { n: 3 })] },
      ],
      tools: { bad: { error: 'boom' } },
    });
    const records: TransitionRecord<string>[] = [];
    const agent = new AgentWithStateMachine(loop, {
      table: TABLE,
      logger: false,
      stall: { detectors: [errorsTwice], policy: 'stop' },
      sink: { write: (r) => void records.push(r) },
    });
    const result = await agent.runTurn('go');
    expect(result.outcome).toBe('stalled');
    expect(result.error!.message).toBe('stalled (toolErrors): the agent hit 2 tool errors');
    // Asked after each response: 1 llm line, then 1 llm + 1 tool + 1 llm, …
    expect(seen).toEqual([1, 3, 5]);
    expect(records.find((r) => r.to === 'Stalled')!.data).toMatchObject({
      stall: { detector: 'toolErrors', evidence: { errors: 2 } },
    });
  });

  it('a detector that throws or returns nonsense ends the turn in Error, naming it', async () => {
    const throws: StallDetector = () => {
      throw new Error('bug in detector');
    };
    const bad = (() => 'stuck') as unknown as StallDetector;
    for (const [detector, message] of [
      [throws, 'stall detector 0 failed: bug in detector'],
      [bad, 'stall detector 0 failed: returned "stuck", not { detector, reason, evidence } or undefined'],
    ] as const) {
      const { agent } = run([sameRead(1)], {
        sameToolCall: false,
        repeatedText: false,
        idleCalls: false,
        detectors: [detector],
      });
      const result = await agent.runTurn('go');
      expect(result.outcome).toBe('error');
      expect(result.error!.message).toBe(message);
    }
  });

  it('a text-only response is not checked: it ends the turn anyway', async () => {
    const { agent, records } = run([{ text: 'same' }, { text: 'same' }], { policy: 'stop' });
    expect((await agent.runTurn('1')).outcome).toBe('end_of_turn');
    expect((await agent.runTurn('2')).outcome).toBe('end_of_turn');
    expect(records.some((r) => r.to === 'Stalled')).toBe(false);
  });

  it('works with the journal on, off, and redacted: the watch reads the entries before the redact', async () => {
    for (const journal of [false, true, { redact: () => ({ type: 'tool' }) as never }]) {
      const { agent, journal: written } = run([sameRead(1), sameRead(2), sameRead(3)], { policy: 'stop' }, { journal });
      expect((await agent.runTurn('go')).outcome).toBe('stalled');
      expect(written.length > 0).toBe(journal !== false);
    }
  });

  describe('options', () => {
    it('is off unless given: the plain table needs no stall states', () => {
      const loop = createScriptedAgent({ replies: [] });
      expect(() => new AgentWithStateMachine(loop, { logger: false })).not.toThrow();
      expect(() => new AgentWithStateMachine(loop, { logger: false, stall: false })).not.toThrow();
    });

    it('brings STALL_EXTENSION when no table is given, and refuses a given table without it, naming it', () => {
      const loop = createScriptedAgent({ replies: [] });
      expect(new AgentWithStateMachine(loop, { logger: false, stall: true }).machine.table.states).toHaveProperty(
        'Stalled',
      );
      const plain = () => new AgentWithStateMachine(loop, { logger: false, table: DEFAULT_TABLE, stall: true });
      expect(plain).toThrow(InvalidTableError);
      expect(plain).toThrow(
        /^`stall` needs the states and edges of STALL_EXTENSION, which `table` lacks \(ProcessingLLMResponse → Stalled,.*\): pass table: extendTable\(yourTable, STALL_EXTENSION\), or leave `table` out/,
      );
    });

    it.each([
      [
        'x',
        'Expected `stall` to be true, false or an object { sameToolCall?, repeatedText?, idleCalls?, detectors?, policy? }, got',
      ],
      [{ sameToolCall: 1 }, 'Expected `stall.sameToolCall` to be an integer of at least 2, or false (off), got `1`'],
      [{ sameToolCall: true }, 'Expected `stall.sameToolCall` to be an integer of at least 2, or false (off)'],
      [{ idleCalls: 0 }, 'Expected `stall.idleCalls` to be a positive integer, or false (off), got `0`'],
      [{ repeatedText: 'yes' }, 'Expected `stall.repeatedText` to be true or false'],
      [{ detectors: [() => undefined, 3] }, 'Expected `stall.detectors[1]` to be a function'],
      [{ detectors: 'f' }, 'Expected `stall.detectors` to be an array of functions'],
      [
        { policy: 'wrapUp' },
        "Expected `stall.policy` to be 'nudge' or 'stop', or a non-empty array of them ('wrapUp' is not available yet)",
      ],
      [{ policy: ['nudge', 'wrapUp'] }, 'Expected `stall.policy[1]` to be'],
      [{ policy: [] }, 'Expected `stall.policy` to be'],
      [{ sameToolCalls: 3 }, 'Expected `stall.sameToolCalls` to be left out: the stall option takes'],
      [
        { sameToolCall: false, repeatedText: false, idleCalls: false },
        'Expected `stall` to be at least one detector on',
      ],
    ])('refuses stall: %p', (stall, message) => {
      const loop = createScriptedAgent({ replies: [] });
      const make = () => new AgentWithStateMachine(loop, { logger: false, table: TABLE, stall } as never);
      expect(make).toThrow(InvalidArgumentError);
      expect(make).toThrow(message);
    });

    it('refuses ledger without journal: the ledger lines hold no responses to judge', () => {
      const loop = createScriptedAgent({ replies: [] });
      const sink = { write: () => undefined, journal: () => undefined };
      expect(
        () => new AgentWithStateMachine(loop, { logger: false, table: TABLE, stall: true, ledger: true, sink }),
      ).toThrow('Expected `journal` to be on (true or { redact }) when both `stall` and `ledger` are');
      expect(
        () =>
          new AgentWithStateMachine(loop, {
            logger: false,
            table: TABLE,
            stall: true,
            ledger: true,
            journal: true,
            sink,
          }),
      ).not.toThrow();
    });
  });
});
