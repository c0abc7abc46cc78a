import type * as Adapter from '../../lib/agent/AgentWithStateMachine';
import type { AgentWithStateMachineOptions } from '../../lib/agent/AgentWithStateMachine';
import type { AgentLoop } from '../../lib/agent/AgentLoop';
import type { JournalEntry } from '../../lib/agent/journal/JournalEntry';
import { journalError } from '../../lib/agent/journal/JournalEntry';
import { findStalls } from '../../lib/agent/stall/findStalls';
import { idleCalls, repeatedText, sameToolCall } from '../../lib/agent/stall/stallDetectors';

// Every adapter the example and fixture runs below make keeps a journal of its run, built from
// its own events (the same content the journal option writes), so that the default detectors
// can be asked about runs written before stall detection existed: none of them goes nowhere.
const mockJournals: JournalEntry[][] = [];
jest.mock('../../lib/agent/AgentWithStateMachine', () => {
  const actual = jest.requireActual<typeof Adapter>('../../lib/agent/AgentWithStateMachine');
  class Journaled extends actual.AgentWithStateMachine {
    constructor(loop: AgentLoop, options?: AgentWithStateMachineOptions) {
      super(loop, options);
      const journal: JournalEntry[] = [];
      mockJournals.push(journal);
      this.on('llmAttempt', (e) => {
        const { turn, operation, attempt, startedAt, endedAt, input } = e;
        const base = { type: 'llm' as const, turn, operation, attempt, startedAt, endedAt, input };
        journal.push(
          e.response === undefined ? { ...base, error: journalError(e.error) } : { ...base, response: e.response },
        );
      });
      this.on('toolCall', (e) => void journal.push({ type: 'tool', ...e }));
    }
  }
  return { ...actual, AgentWithStateMachine: Journaled };
});

// Imported after the mock, so that they build the journaled adapter.
import { runDemo } from '../../examples/demo';
import { runExample } from '../../examples/wrap-existing-loop';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { runBatch } from '../../lib/batch/runBatch';
import { batchTasks } from '../fixtures/batch/batchTasks';
import { manualClock } from '../helpers/manualClock';

const DEFAULTS = [sameToolCall(), repeatedText(), idleCalls()];
const responses = (journal: readonly JournalEntry[]): number =>
  journal.filter((e) => e.type === 'llm' && e.response !== undefined).length;

beforeEach(() => {
  mockJournals.length = 0;
});

describe('the default stall detectors on runs that do not stall', () => {
  it('the demo, the wrapped loop and a batch of fixture tasks: no detector fires', async () => {
    let t = 0;
    await runDemo({ sleep: async () => undefined, print: () => undefined, clock: () => (t += 5) });
    await runExample(() => undefined);
    await runBatch(batchTasks(), { logger: false, sleep: async () => undefined, clock: manualClock().now });
    // The demo, the example's adapter, twelve batch runs: each with responses to judge.
    expect(mockJournals.length).toBeGreaterThanOrEqual(14);
    expect(mockJournals.reduce((n, j) => n + responses(j), 0)).toBeGreaterThan(30);
    for (const journal of mockJournals) expect(findStalls(journal, DEFAULTS)).toEqual([]);
  });

  it('the same harness does see a run that stalls (so the check above can fail)', async () => {
    const read = (id: string) => ({ toolCalls: [{ id, name: 'read', input: { path: 'a' } }] });
    const loop = createScriptedAgent({
      replies: [read('1'), read('2'), read('3'), { text: 'x' }],
      tools: { read: {} },
    });
    await new AgentWithStateMachine(loop, { logger: false }).runTurn('go');
    expect(findStalls(mockJournals[0]!, DEFAULTS).map((s) => s.finding.detector)).toEqual(['sameToolCall']);
  });
});
