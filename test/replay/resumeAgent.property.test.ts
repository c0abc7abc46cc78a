// A scripted run recorded whole, its file cut at a random line (as a kill leaves it), then
// resumed: the resumed run makes the moves the whole run made, requests no LLM call the cut
// file had answered, and runs again only the tools its policy allows.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { resumeAgent } from '../../lib/replay/resumeAgent';
import { manualClock } from '../helpers/manualClock';

const instant = async (): Promise<void> => undefined;
const COST = { inputTokens: 10, outputTokens: 5, costUsd: 0.01 };

let dir: string;
beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-resume-prop-'))));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Rounds of tool calls (`read` only reads, `write` has effects), then a text reply. */
function scriptOf(rounds: ('read' | 'write')[][]): ScriptedReply[] {
  return [
    ...rounds.map((names, r) => ({
      text: `round ${r}`,
      toolCalls: names.map((name, i) => ({ id: `c${r}-${i}`, name, input: { r, i } })),
      usage: COST,
    })),
    { text: 'done', usage: COST },
  ];
}

/** The scripted loop, counting what its tools and LLM are asked, by content. */
function loop(replies: ScriptedReply[]) {
  return createScriptedAgent({
    sleep: instant,
    replies,
    tools: {
      read: (call) => `read ${call.id}`,
      write: (call) => `wrote ${call.id}`,
    },
  });
}

const moves = (records: readonly { from: string; to: string; forced: boolean }[]) =>
  records.map((r) => `${r.from}>${r.to}${r.forced ? '!' : ''}`);

let n = 0;

describe('resumeAgent on a run cut at any line', () => {
  it('reproduces the whole run’s moves, never re-requests an answered call, and follows the tool policy', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom<'read' | 'write'>('read', 'write'), { minLength: 1, maxLength: 3 }), {
          maxLength: 4,
        }),
        fc.integer({ min: 1, max: 3 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        async (rounds, toolConcurrency, where, cutMidLine) => {
          const replies = scriptOf(rounds);
          const whole = path.join(dir, `whole-${++n}.jsonl`);
          const sink = JsonlHistorySink.open(whole, { runId: 'r' });
          const first = new AgentWithStateMachine(loop(replies), {
            sink,
            journal: true,
            logger: false,
            clock: manualClock().now,
            toolConcurrency,
          });
          await first.runTurn('go');
          sink.close();
          const lines = fs.readFileSync(whole, 'utf8').split('\n').slice(0, -1);
          const keep = Math.min(lines.length - 1, Math.floor(where * lines.length));
          const cut = path.join(dir, `cut-${n}.jsonl`);
          const half = cutMidLine && keep < lines.length ? lines[keep]!.slice(0, lines[keep]!.length >> 1) : '';
          fs.writeFileSync(cut, lines.slice(0, keep).join('\n') + (keep > 0 ? '\n' : '') + half);
          const recorded = (await loadHistory(cut)).journal;
          const answered = recorded.filter((j) => j.type === 'llm' && j.response !== undefined).length;
          const toolsDone = new Map(
            recorded.filter((j) => j.type === 'tool' && j.status === 'ok').map((j) => [j.call!.id, j.call!.name]),
          );

          const resumedLoop = loop(replies);
          const out = path.join(dir, `resumed-${n}.jsonl`);
          const resumedSink = JsonlHistorySink.open(out, { runId: 'r' });
          const { agent, results, resumed } = await resumeAgent(cut, resumedLoop, {
            sink: resumedSink,
            journal: true,
            logger: false,
            clock: manualClock().now,
            toolConcurrency,
            inputs: ['go'],
            resumeTools: { default: 'serve', rerun: ['read'] },
          });
          resumedSink.close();
          expect(results.map((r) => r.outcome)).toEqual(['end_of_turn']);
          expect(resumed.mode).toBe(answered > 0 ? 'recovered' : 'restarted');
          expect(resumed.recordedCalls).toBe(answered);
          // The LLM is asked only for the calls the cut file had no response to.
          const asked = resumedLoop.calls.filter((c) => c.op === 'sendUserMessage' || c.op === 'sendToolResults');
          expect(asked.length).toBe(replies.length - answered);
          // Same moves as the whole run.
          expect(moves((await loadHistory(out)).records)).toEqual(moves((await loadHistory(whole)).records));
          // A recorded `write` is answered from the journal, a recorded `read` runs again.
          const ran = new Set(resumedLoop.calls.flatMap((c) => (c.op === 'runTool' ? [c.call.id] : [])));
          for (const [id, name] of toolsDone) expect({ id, ran: ran.has(id) }).toEqual({ id, ran: name === 'read' });
          // What the run spent is counted once: the served calls and the live ones, as the whole run.
          expect(agent.usage.llmCalls).toBe(first.usage.llmCalls);
          expect(agent.usage.costUsd).toBeCloseTo(first.usage.costUsd, 10);
        },
      ),
      { numRuns: 60 },
    );
  });
});
