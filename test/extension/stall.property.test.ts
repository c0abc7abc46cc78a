import fc from 'fast-check';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { STALL_EXTENSION } from '../../lib/agent/extensionStates';
import { findStalls } from '../../lib/agent/stall/findStalls';
import type { JournalEntry } from '../../lib/agent/journal/JournalEntry';
import { idleCalls, repeatedText, sameToolCall, type StallDetector } from '../../lib/agent/stall/stallDetectors';
import { extendTable } from '../../lib/machine/extendTable';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

// Random scripts over a small alphabet of tools, inputs and texts, so that repeats are common.
const TABLE = extendTable(DEFAULT_TABLE, STALL_EXTENSION);
const callArb = fc.record({
  name: fc.constantFrom('read', 'ls'),
  input: fc.oneof(
    fc.constantFrom<unknown>({ path: 'a' }, { path: 'b' }, undefined),
    fc.constant({ z: 1, a: 2 }),
    fc.constant({ a: 2, z: 1 }),
  ),
});
const replyArb: fc.Arbitrary<ScriptedReply> = fc
  .oneof(
    {
      weight: 5,
      arbitrary: fc.record(
        {
          text: fc.constantFrom('Let me look.', 'Checking.', ' Let me look. '),
          calls: fc.array(callArb, { minLength: 1, maxLength: 2 }),
        },
        { requiredKeys: ['calls'] },
      ),
    },
    { weight: 1, arbitrary: fc.record({ text: fc.constantFrom('done', 'Let me look.') }) },
    { weight: 1, arbitrary: fc.constant({ error: '529 overloaded' }) },
  )
  .map((r) => {
    if (!('calls' in r)) return r as ScriptedReply;
    const { calls, ...rest } = r as { calls: Array<{ name: string; input: unknown }>; text?: string };
    return { ...rest, toolCalls: calls.map((c, i) => ({ id: `c${i}`, ...c })) };
  });
const detectorsArb = fc.record({
  k: fc.integer({ min: 2, max: 4 }),
  n: fc.integer({ min: 1, max: 4 }),
  text: fc.boolean(),
});

const builtIns = (o: { k: number; n: number; text: boolean }): StallDetector[] => [
  sameToolCall(o.k),
  ...(o.text ? [repeatedText()] : []),
  idleCalls(o.n),
];

/** Frozen all the way down, so a detector that changed its journal would throw. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

describe('stall detectors (property-based)', () => {
  it("a run's Stalled moves are where findStalls finds them in its journal: the firing is a function of the journal prefix", async () => {
    let fired = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(replyArb, { minLength: 1, maxLength: 14 }),
        detectorsArb,
        fc.integer({ min: 1, max: 3 }),
        async (replies, o, turns) => {
          const records: TransitionRecord<string>[] = [];
          const journal: JournalEntry[] = [];
          const loop = createScriptedAgent({
            replies: [...replies, ...Array.from({ length: turns }, () => ({ text: 'end' }))],
            tools: { read: { output: 'x' }, ls: { output: 'y' } },
          });
          let tick = 0;
          const agent = new AgentWithStateMachine(loop, {
            table: TABLE,
            logger: false,
            journal: true,
            retry: { retries: 0 },
            clock: () => tick++,
            stall: { sameToolCall: o.k, repeatedText: o.text, idleCalls: o.n, policy: 'nudge' },
            sink: { write: (r) => void records.push(r), journal: (e) => void journal.push(e as JournalEntry) },
          });
          for (let t = 0; t < turns; t++) await agent.runTurn(`turn ${t}`);
          const stalled = records.filter((r) => r.to === 'Stalled').map((r) => (r.data as { stall: unknown }).stall);
          const found = findStalls(journal, builtIns(o)).map((s) => s.finding);
          expect(stalled).toEqual(JSON.parse(JSON.stringify(found)));
          if (stalled.length > 0) fired += 1;
        },
      ),
      { numRuns: 150 },
    );
    // The scripts repeat often enough that the property is about runs that stall.
    expect(fired).toBeGreaterThan(20);
  });

  it('a detector answers the same for the same prefix, a copy of it, and never changes it', () => {
    fc.assert(
      fc.property(fc.array(replyArb, { minLength: 1, maxLength: 10 }), detectorsArb, (replies, o) => {
        let turn = 1;
        const journal: JournalEntry[] = [];
        for (const [i, r] of replies.entries()) {
          const at = { startedAt: i, endedAt: i };
          const operation = i === 0 || journal.at(-1)?.type === 'llm' ? 'sendUserMessage' : 'sendToolResults';
          if (r.error !== undefined)
            journal.push({
              type: 'llm',
              turn,
              operation,
              attempt: 1,
              ...at,
              error: { name: 'Error', message: r.error },
            });
          else journal.push({ type: 'llm', turn, operation, attempt: 1, ...at, response: { ...r } });
          for (const call of r.toolCalls ?? [])
            journal.push({ type: 'tool', turn, call, status: 'ok', ...at, result: { callId: call.id, output: 'x' } });
          if (r.toolCalls === undefined) turn += 1;
        }
        deepFreeze(journal);
        for (const detector of builtIns(o))
          for (let end = 1; end <= journal.length; end++) {
            const prefix = journal.slice(0, end);
            const first = detector(prefix);
            expect(detector(prefix)).toEqual(first);
            expect(detector(structuredClone(prefix))).toEqual(first);
            // What follows the prefix cannot change what was found on it.
            expect(findStalls(prefix, [detector])).toEqual(
              findStalls(journal, [detector]).filter((s) => s.index < end),
            );
          }
      }),
      { numRuns: 60 },
    );
  });
});
