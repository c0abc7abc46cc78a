// `agent-sm inspect --follow` as the built executable: nothing but the following itself may
// keep the process alive, so this is where a follow that quits early shows.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildCli, startCli, type RunningCli } from '../helpers/builtCli';

let dir: string;
let running: RunningCli | undefined;
beforeAll(() => buildCli(), 120_000);
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-follow-built-'));
});
afterEach(() => {
  running?.child.kill('SIGKILL');
  running = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

const T = Date.UTC(2026, 0, 1, 12);
const move = (seq: number, from: string, to: string, description = `${from} to ${to}`): string =>
  `${JSON.stringify({ seq, from, to, description, at: T + seq * 1000, durationMs: 1000, forced: false })}\n`;

describe('agent-sm inspect --follow (built executable, stdout a pipe)', () => {
  it('keeps following the file as it grows, and exits by itself when the run ends, with the summary', async () => {
    const file = path.join(dir, 'run.jsonl');
    fs.writeFileSync(file, move(1, 'Ready', 'WaitingForUserInput'));
    running = startCli(['inspect', '--follow', file]);
    await running.seen('Ready → WaitingForUserInput');
    fs.appendFileSync(file, move(2, 'WaitingForUserInput', 'SendingToLLM'));
    await running.seen('WaitingForUserInput → SendingToLLM');
    // Still following: the run has not ended.
    expect(running.stdout()).not.toContain('FAILED');
    fs.appendFileSync(file, move(3, 'SendingToLLM', 'Error', 'LLM request failed'));
    expect(await running.exited()).toBe(0);
    expect(running.stdout()).toContain('SendingToLLM → Error');
    expect(running.stdout()).toMatch(/FAILED: the run ended in Error at seq 3/);
    expect(running.stderr()).toBe('');
  }, 60_000);

  it('a run that ends well ends the follow too; lines after a finished turn are still read', async () => {
    const file = path.join(dir, 'ok.jsonl');
    fs.writeFileSync(file, move(1, 'Ready', 'WaitingForUserInput') + move(2, 'WaitingForUserInput', 'SendingToLLM'));
    running = startCli(['inspect', '--follow', file]);
    await running.seen('WaitingForUserInput → SendingToLLM');
    fs.appendFileSync(
      file,
      move(3, 'SendingToLLM', 'ProcessingLLMResponse') + move(4, 'ProcessingLLMResponse', 'EndOfTurn'),
    );
    expect(await running.exited()).toBe(0);
    expect(running.stdout()).toContain('ProcessingLLMResponse → EndOfTurn');
  }, 60_000);

  it('follows a file that does not exist yet, and ends on Ctrl-C (SIGINT) with the summary', async () => {
    const file = path.join(dir, 'later.jsonl');
    running = startCli(['inspect', '--follow', file]);
    await running.seen('description\n');
    fs.writeFileSync(file, move(1, 'Ready', 'WaitingForUserInput') + move(2, 'WaitingForUserInput', 'SendingToLLM'));
    await running.seen('WaitingForUserInput → SendingToLLM');
    running.child.kill('SIGINT');
    expect(await running.exited()).toBe(0);
    expect(running.stdout()).toMatch(/incomplete|did not end|cut off/i);
  }, 60_000);
});
