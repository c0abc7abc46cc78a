// A folder batch takes the answers people write into its folder (`batch.answers/`, as
// `agent-sm approve|deny <folder>` writes them) while a run waits: each once, marked taken.
// One written before the run waits is taken when it does; one the batch's own `onApproval`
// gave first is not taken again.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { APPROVAL_EXTENSION } from '../../lib/agent/extensionStates';
import { AnsweredAlreadyError, ANSWERS_DIR, readAnswers, writeAnswer } from '../../lib/batch/keeping/approvalAnswers';
import { runBatch, type BatchOptions } from '../../lib/batch/runBatch';
import { readWaitingApprovals } from '../../lib/batch/approvals/waitingApprovals';
import { extendTable } from '../../lib/machine/extendTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-answers-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function deploying(id: string, ran: string[]) {
  return createScriptedAgent({
    replies: [{ toolCalls: [{ id: 'c2', name: 'deploy', input: { target: id } }] }, { text: 'done' }],
    tools: { deploy: () => (ran.push(id), 'deployed') },
  });
}

const base = (): BatchOptions => ({
  table: extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION),
  approve: { deploy: true },
  logger: false,
  historyDir: dir,
  concurrency: 1,
});

describe("a folder batch takes the answers written into its folder's batch.answers/", () => {
  it('an answer written while the run waits is taken once and marked taken; one written before it waits is taken when it does', async () => {
    const ran: string[] = [];
    let answered: Promise<void> | undefined;
    // Before the batch runs: the answer to b waits in the folder for b to wait.
    writeAnswer(dir, { run: 'b', callId: 'c2', approved: false, reason: 'not b', at: 1 });
    const report = await runBatch(
      ['a', 'b'].map((id) => ({ id, input: 'go', agent: deploying(id, ran) })),
      {
        ...base(),
        onProgress: ({ event }) => {
          if (event.type !== 'parked' || event.id !== 'a') return;
          answered = readWaitingApprovals(dir).then((found) => {
            const call = found.calls.find((c) => c.run === 'a')!;
            expect(call).toMatchObject({ run: 'a', callId: 'c2', tool: 'deploy', input: { target: 'a' } });
            writeAnswer(dir, { run: 'a', callId: 'c2', approved: true, at: 2, waitingSince: call.since });
            // A second answer to the same wait: refused, whether the batch took the first yet or not.
            expect(() =>
              writeAnswer(dir, { run: 'a', callId: 'c2', approved: false, at: 3, waitingSince: call.since }),
            ).toThrow(AnsweredAlreadyError);
          });
        },
      },
    );
    await answered;
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([
      ['a', 'end_of_turn'],
      ['b', 'end_of_turn'],
    ]);
    expect(ran).toEqual(['a']);
    expect(fs.readFileSync(path.join(dir, 'b.jsonl'), 'utf8')).toContain('denied: not b');
    const { answers, problems } = readAnswers(dir);
    expect(problems).toEqual([]);
    expect(answers.map((a) => [a.run, a.approved, a.taken]).sort()).toEqual([
      ['a', true, true],
      ['b', false, true],
    ]);
    expect((await readWaitingApprovals(dir)).calls).toEqual([]);
  });

  it("an answer onApproval gave first counts; the folder's for the same call is left, not taken, and the batch ends", async () => {
    const ran: string[] = [];
    writeAnswer(dir, { run: 'a', callId: 'c2', approved: true, at: 1 });
    const report = await runBatch([{ id: 'a', input: 'go', agent: deploying('a', ran) }], {
      ...base(),
      onApproval: ({ deny }) => deny('c2', 'in process'),
    });
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn']);
    expect(ran).toEqual([]);
    expect(fs.readdirSync(path.join(dir, ANSWERS_DIR)).filter((f) => f.endsWith('.json'))).toHaveLength(1);
  });
});
