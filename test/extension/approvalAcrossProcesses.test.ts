import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { formatSummary } from '../../lib/history/formatSummary';
import { renderRunPage } from '../../lib/report/renderRunPage';

const TSX = path.join(__dirname, '../../node_modules/.bin/tsx');
const SCRIPT = path.join(__dirname, '../fixtures/approvalProcess.ts');

function runProcess(...args: string[]): Record<string, unknown> {
  return JSON.parse(execFileSync(TSX, [SCRIPT, ...args], { encoding: 'utf8' })) as Record<string, unknown>;
}

describe('approval across two processes', () => {
  it('a run paused for approval in one process is picked up from its file by another, approved and finished, with no LLM call repeated', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-approval-'));
    const first = path.join(dir, 'run.jsonl');
    const second = path.join(dir, 'run.resumed.jsonl');

    const a = runProcess('pause', first);
    expect(a['outcome']).toBe('awaiting_approval');
    expect(a['pending']).toEqual([{ callId: 'c1', name: 'rm', input: { path: '/tmp/x' } }]);
    expect(a['calls']).toEqual([{ op: 'sendUserMessage', message: 'remove /tmp/x', attempt: 1 }]);
    const paused = await loadHistory(first);
    expect(paused.records.at(-1)!.to).toBe('AwaitingApproval');
    // A run waiting for a person is not a run cut off.
    expect(validateHistory(paused.entries).interrupted).toBeUndefined();
    // inspect and the report show the request.
    const summary = summarizeHistory(paused.entries);
    expect(summary.waiting).toMatchObject({ state: 'AwaitingApproval', requests: [{ callId: 'c1', name: 'rm' }] });
    const text = formatSummary(summary);
    expect(text).toContain('WAITING in AwaitingApproval');
    expect(text).toContain('"callId":"c1"');
    expect(text).not.toContain('INCOMPLETE');
    const page = renderRunPage(paused.entries);
    expect(page).toContain('id="waiting"');
    expect(page).toContain('&quot;name&quot;:&quot;rm&quot;');

    const b = runProcess('finish', first, second);
    expect(b['paused']).toBe('awaiting_approval');
    expect(b['outcome']).toBe('end_of_turn');
    expect(b['text']).toBe('removed it');
    // The second process ran the approved tool and made only the call after it.
    expect((b['calls'] as Array<{ op: string }>).map((c) => c.op)).toEqual(['runTool', 'sendToolResults']);
    // Both calls' costs count once: the first from the journal, the second live.
    expect((b['usage'] as { costUsd: number; llmCalls: number }).costUsd).toBeCloseTo(0.75, 10);
    const finished = await loadHistory(second);
    expect(validateHistory(finished.entries).issues).toEqual([]);
    expect(finished.records.map((r) => r.to).slice(0, paused.records.length)).toEqual(paused.records.map((r) => r.to));
    expect(finished.records.at(-1)!.to).toBe('EndOfTurn');
    expect(finished.journal.filter((j) => j.type === 'llm')).toHaveLength(2);
    // Two processes started by tsx on a shared machine: time to compile, not to wait on anything.
  }, 120_000);
});
