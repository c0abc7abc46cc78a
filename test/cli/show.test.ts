import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type ScriptedReply } from '../../lib/agent/createScriptedAgent';
import { JsonlHistorySink } from '../../lib/history/JsonlHistorySink';
import { manualClock } from '../helpers/manualClock';
import { runCli } from '../helpers/runCli';

const instant = async (): Promise<void> => undefined;
let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-show-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function record(replies: ScriptedReply[], inputs: string[], journal = true): Promise<string> {
  const file = path.join(dir, `run-${inputs.length}-${replies.length}.jsonl`);
  const sink = JsonlHistorySink.open(file, { runId: 'r' });
  const agent = new AgentWithStateMachine(
    createScriptedAgent({
      sleep: instant,
      replies,
      tools: { bash: { output: 'total 0\nfile.txt\u001b]0;pwned\u0007' }, fail: { error: 'exit 1' } },
    }),
    { sink, journal, logger: false, clock: manualClock().now, sleep: instant, retry: { retries: 2 } },
  );
  for (const input of inputs) await agent.runTurn(input);
  sink.close();
  return file;
}

const USAGE = { inputTokens: 100, outputTokens: 20, costUsd: 0.01 };

describe('agent-sm show', () => {
  it('prints the conversation: user messages, failed attempts, model texts, tool calls with inputs, tool results, per turn; escaped', async () => {
    const file = await record(
      [
        { error: 'overloaded' },
        {
          toolCalls: [
            { id: 'c1', name: 'bash', input: { cmd: 'ls' } },
            { id: 'c2', name: 'fail' },
          ],
          usage: USAGE,
        },
        { text: 'one tool failed \u001b[2J', usage: USAGE },
        { text: 'second answer', usage: USAGE },
      ],
      ['fix the bug', 'and again'],
    );
    const { code, stdout, stderr } = await runCli('show', file);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    // eslint-disable-next-line no-control-regex -- control characters are what must not be printed
    expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    const lines = stdout.split('\n');
    expect(lines[0]).toBe('Turn 1');
    expect(stdout).toMatch(/ {2}user \(before move \d+\):\n {4}fix the bug\n/);
    // It failed after its request may have left, with no cap holding it: its cost is unknown, never $0.
    expect(stdout).toMatch(/ {2}model, attempt 1, cost unknown \(before move \d+\): FAILED Error: overloaded/);
    expect(stdout).toMatch(
      / {2}model, attempt 2, \$0\.0100 \(before move \d+\)[^\n]*:\n {4}→ bash \(c1\)\n {8}\{"cmd":"ls"\}\n {4}→ fail \(c2\)/,
    );
    expect(stdout).toMatch(
      / {2}tool bash \(c1\) ok \(before move \d+\):\n {4}total 0\n {4}file\.txt\\u001b\]0;pwned\\u0007/,
    );
    expect(stdout).toMatch(/ {2}tool fail \(c2\) error/);
    expect(stdout).toContain('    one tool failed \\u001b[2J');
    expect(stdout).toMatch(/\n\nTurn 2\n {2}user \(before move \d+\):\n {4}and again\n[^]*second answer/);

    const turn2 = await runCli('show', file, '--turn', '2');
    expect(turn2.stdout.startsWith('Turn 2\n')).toBe(true);
    expect(turn2.stdout).not.toContain('fix the bug');

    const seq = Number(/tool bash \(c1\) ok \(before move (\d+)\)/.exec(stdout)![1]);
    const bySeq = await runCli('show', file, '--seq', String(seq));
    expect(bySeq.stdout).toContain('tool bash (c1) ok');
    expect(bySeq.stdout).not.toContain('user (');
    expect((await runCli('show', file, '--seq', '1')).stdout).toBe('(nothing was said in move 1)\n');
  });

  it('folds long content, and --full unfolds it', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `line ${i} ${'x'.repeat(30)}`).join('\n');
    const file = await record([{ text: long, usage: USAGE }], ['go']);
    const folded = await runCli('show', file);
    expect(folded.stdout).toContain('line 11 ');
    expect(folded.stdout).not.toContain('line 12 ');
    expect(folded.stdout).toMatch(/… [\d,]+ more characters folded \(agent-sm show --full shows them\)/);
    const full = await runCli('show', file, '--full');
    expect(full.stdout).toContain('line 39 ');
    expect(full.stdout).not.toContain('folded');
  });

  it('says so for a file without a journal', async () => {
    const file = await record([{ text: 'hi', usage: USAGE }], ['go'], false);
    expect(await runCli('show', file)).toEqual({
      code: 0,
      stdout: '(no conversation: the file has no journal; write it with journal: true)\n',
      stderr: '',
    });
  });
});
