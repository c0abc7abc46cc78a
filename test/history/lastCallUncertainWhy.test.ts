// What an attempt's file says of its last call's money: why it is uncertain (in flight when the
// file ended, or charged at its hold), or nothing when it was billed. A distributed run taken over
// charges that call's hold again; its report names it once (takeoverCredit.lessCredited).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBatch } from '../../lib/index';
import { readRunFile } from '../../lib/history/readRunFile';
import { THREE_FIGURES, threeFiguresTask } from '../helpers/threeFigures';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-last-call-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The attempt's last call's reason, its file cut after line `at` of the lines `pick` finds (all: -1). */
async function lastCallWhy(pick: (lines: string[]) => number): Promise<string | undefined> {
  const file = path.join(dir, 't.jsonl');
  const lines = fs.readFileSync(file, 'utf8').split(/(?<=\n)/);
  const cut = path.join(dir, 'cut.jsonl');
  fs.writeFileSync(cut, lines.slice(0, pick(lines) + 1).join(''));
  const facts = await readRunFile(cut, { onWarning: () => undefined });
  return facts.attempt.lastCallUncertainWhy;
}

it('is the in-flight reason, the 500, or nothing, as the file ends', async () => {
  // A 429 (released), a 500 (charged at its hold), an answer (billed).
  await runBatch([threeFiguresTask('t')], { ...THREE_FIGURES, historyDir: dir, logger: false });
  const nth = (type: string, n: number) => (lines: string[]) =>
    lines.flatMap((l, i) => (l.startsWith(`{"type":"${type}"`) ? [i] : []))[n]!;
  // Released: not uncertain.
  expect(await lastCallWhy(nth('llm', 0))).toBeUndefined();
  expect(await lastCallWhy(nth('llm', 1))).toBe('it failed after the request may have left (HTTP 500)');
  expect(await lastCallWhy(nth('reserve', 2))).toBe(
    'reserved, and no response recorded (in flight when the file ended)',
  );
  // Answered and billed: the whole file.
  expect(await lastCallWhy((lines) => lines.length - 1)).toBeUndefined();
});
