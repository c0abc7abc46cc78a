import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import type { HistoryWarning } from '../../lib/history/HistoryEntry';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { loadHistory } from '../../lib/history/loadHistory';
import { replayFile } from '../../lib/replay/replayFile';
import { replayRun } from '../../lib/replay/replayRun';
import { manualClock } from '../helpers/manualClock';

// `replayFile` reads the file as the replay goes (what `agent-sm replay` runs); it must say
// exactly what `replayRun` says of the same file loaded whole.

const instant = async (): Promise<void> => undefined;
const CALL_COST = { inputTokens: 100, outputTokens: 20, costUsd: 0.01 };

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-replay-file-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Records turns of a scripted agent, journal on (or off), and returns the file. */
async function record(replies: ScriptedReply[], inputs: string[], journal = true): Promise<string> {
  const file = path.join(dir, `run-${Math.random().toString(36).slice(2)}.jsonl`);
  const sink = JsonlHistorySink.open(file, { runId: 'r' });
  const agent = new AgentWithStateMachine(
    createScriptedAgent({ sleep: instant, replies, tools: { bash: { output: 'ok' }, fail: { error: 'exit 1' } } }),
    { sink, journal, logger: false, clock: manualClock().now, sleep: instant, retry: { retries: 2 } },
  );
  for (const input of inputs) await agent.runTurn(input);
  sink.close();
  return file;
}

const reply = fc.oneof(
  fc.constant<ScriptedReply>({ text: 'done', usage: CALL_COST }),
  fc.constant<ScriptedReply>({ error: 'overloaded' }),
  fc.constantFrom('bash', 'fail').chain((name) =>
    fc.integer({ min: 1, max: 3 }).map((n): ScriptedReply => ({
      toolCalls: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name })),
      usage: CALL_COST,
    })),
  ),
);

describe('replayFile', () => {
  it('reports what replayRun reports of the loaded file: reproduced, stopped by limits, or parted (property-based)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(reply, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 3 }),
        fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
        fc.boolean(),
        async (replies, turns, maxLlmCalls, cut) => {
          const file = await record(
            [...replies, { text: 'end' }, { text: 'end' }, { text: 'end' }],
            Array.from({ length: turns }, (_, i) => `turn ${i + 1}`),
          );
          if (cut) {
            // Lose the file's last journal lines and moves: the replay asks for a call the journal does not have.
            const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
            const lastLLM = lines.map((l) => l.startsWith('{"type":"llm"')).lastIndexOf(true);
            fs.writeFileSync(file, `${lines.slice(0, lastLLM).join('\n')}\n`);
          }
          const options = maxLlmCalls === undefined ? {} : { budget: { maxLlmCalls } };
          const loaded = await loadHistory(file);
          if (!loaded.journal.some((j) => j.type === 'llm')) return; // cut to no call at all: the next test
          const whole = await replayRun(loaded, options);
          expect(await replayFile(file, {}, options)).toEqual(whole);
          if (cut) expect(whole.reproduced).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a file without a journal as replayRun does', async () => {
    const file = await record([{ text: 'x' }], ['x'], false);
    const message =
      'Expected `journal` to be a journal with at least one LLM call (was the run written with journal: true?)';
    await expect(replayRun(await loadHistory(file))).rejects.toThrow(message);
    await expect(replayFile(file, {})).rejects.toThrow(message);
  });

  it('throws a corrupt line in the middle of the file, never taking it for the end; with salvage, warns and reads past it', async () => {
    const file = await record(
      [
        { toolCalls: [{ id: 'c1', name: 'bash' }], usage: CALL_COST },
        { text: 'done', usage: CALL_COST },
        { text: 'long answer '.repeat(200_000) },
      ],
      ['first', 'second'],
    );
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    // A line past the first megabyte (the second turn's answer is 2.4 MB), so it is read when the
    // replay asks for the second turn's call, inside the adapter's LLM call, not before it starts.
    const at = lines.findIndex((l) => l.includes('"second"'));
    lines.splice(at + 1, 0, '{"seq": garbage');
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    await expect(replayFile(file, {})).rejects.toMatchObject({ code: 'corrupt_line' });
    const warnings: HistoryWarning[] = [];
    const salvaged = await replayFile(file, { salvage: true, onWarning: (w) => warnings.push(w) });
    expect(warnings.map((w) => w.code)).toEqual(['skipped_line']);
    expect(salvaged).toEqual(await replayRun(await loadHistory(file, { salvage: true })));
    expect(salvaged.reproduced).toBe(true);
  });
});
