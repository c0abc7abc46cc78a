// Issue 50, item 7 ("Resume forgets"): a journaled batch of real SDK loops under a strict cap,
// killed with SIGKILL eight times in a row — each process let one more request be answered, then
// killed once a request is held at the server — and resumed in a new process each time. The
// server bills every request it receives, answered or not: a request in flight at a kill may
// have been billed. Every such request had its reservation written first, so what the batch
// reports (in process, and from the files) is never below what the server billed, and the
// strict cap holds across all nine processes.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readBatchFolder } from '../../lib/batch/reading/readBatchFolder';
import { batchChild, CALL_USD, phasedBillingServer } from '../helpers/killableBatch';

jest.setTimeout(180_000);

const TASKS = 6;
const KILLS = 8;
/**
 * Six tasks of two calls: $0.12 if nothing is cut. Each kill leaves up to three calls in flight,
 * held at their worst case ($0.01 each) and made again: the cap stops the last process before
 * every task is done. Each killed process needs its hold to fit beside what the earlier ones
 * left: at most $0.04 a process (one answer, three held), $0.32 before the last kill's request.
 */
const CAP_USD = 0.36;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-killed-again-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe('a strict batch of adapter tasks killed eight times and resumed', () => {
  it("reports at least what the server billed, counts every earlier attempt's held calls, and keeps its cap", async () => {
    const dir = fs.mkdtempSync(path.join(work, 'run-'));
    const llm = await phasedBillingServer();
    const args = (mode: 'run' | 'resume'): string[] => [
      mode,
      dir,
      llm.server.baseURL,
      String(CAP_USD),
      `sk-phase-${llm.phase}`,
    ];
    try {
      for (let kill = 0; kill < KILLS; kill++) {
        // One more answer, then every request is held until the kill.
        const held = llm.next(llm.answered.length + 1);
        const proc = batchChild(work, args(kill === 0 ? 'run' : 'resume'), 'strictLlmBatchToKill');
        await Promise.race([
          held,
          proc.exited.then(({ code }) => {
            throw new Error(`process ${kill + 1} exited (${code}) before its held request: ${proc.stderr()}`);
          }),
        ]);
        proc.kill();
        expect((await proc.exited).signal).toBe('SIGKILL');
      }
      expect(llm.answered).toHaveLength(KILLS);
      const interrupted = fs.readdirSync(dir).filter((f) => f.includes('.interrupted'));
      // Runs cut off again and again: more than one earlier attempt kept beside a file.
      expect(interrupted.some((f) => /\.interrupted\.\d+$/.test(f))).toBe(true);

      void llm.next(Infinity);
      const last = batchChild(work, args('resume'), 'strictLlmBatchToKill');
      const exit = await last.exited;
      expect({ exit, stderr: exit.code === 0 ? '' : last.stderr() }).toEqual({
        exit: { code: 0, signal: null },
        stderr: '',
      });
      const report = JSON.parse(last.stdout()) as { runs: { id: string }[]; costUsd: number };
      expect(report.runs.map((r) => r.id)).toEqual(Array.from({ length: TASKS }, (_, i) => `task-${i}`));

      const billed = llm.received * CALL_USD;
      const folder = await readBatchFolder(dir, { onWarning: () => undefined });
      const figures = {
        billed: Math.round(billed * 1e4) / 1e4,
        reported: Math.round(report.costUsd * 1e4) / 1e4,
        fromFiles: Math.round(folder.totals.costUsd * 1e4) / 1e4,
      };
      // Printed for the record: what the server billed beside what the batch says.
      process.stdout.write(`killed ${KILLS} times: ${JSON.stringify(figures)}\n`);
      // Never below what the server billed: no request in flight at a kill is forgotten.
      expect(report.costUsd).toBeGreaterThanOrEqual(billed - 1e-9);
      // The files say what the process said.
      expect(folder.totals.costUsd).toBeCloseTo(report.costUsd, 9);
      // The strict cap held across all nine processes: in what the batch counts, and in what was billed.
      expect(report.costUsd).toBeLessThanOrEqual(CAP_USD + 1e-9);
      expect(billed).toBeLessThanOrEqual(CAP_USD + 1e-9);
    } finally {
      await llm.server.close();
    }
  });
});
