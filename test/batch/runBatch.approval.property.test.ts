import fc from 'fast-check';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { APPROVAL_EXTENSION } from '../../lib/agent/extensionStates';
import type { BatchApprovalRequest } from '../../lib/batch/approvals/ParkedRuns';
import { runBatch } from '../../lib/batch/runBatch';
import { extendTable } from '../../lib/machine/extendTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

const TABLE = extendTable(DEFAULT_TABLE, APPROVAL_EXTENSION);

/** A task that asks approval for `rm` once per entry of `asks` (the number of calls each time), or never. */
function agentFor(asks: number[]) {
  let n = 0;
  return createScriptedAgent({
    replies: [
      ...asks.map((calls) => ({
        toolCalls: Array.from({ length: calls }, () => ({ id: `c${++n}`, name: 'rm' })),
      })),
      { toolCalls: [{ id: 'w', name: 'work' }] },
      { text: 'done' },
    ],
    tools: { rm: { output: 'removed' }, work: { output: 'ok' } },
  });
}

describe('runBatch parking: invariants', () => {
  it('whatever runs ask and whenever answers come, the slots never pass the concurrency and every run ends, parked and resumed in turn', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.array(fc.integer({ min: 1, max: 2 }), { maxLength: 2 }), { minLength: 1, maxLength: 7 }),
        // How many batch events each request waits for before it is answered.
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
        async (concurrency, asks, delays) => {
          const waiting: Array<{ request: BatchApprovalRequest; left: number }> = [];
          let asked = 0;
          let over = 0;
          const events = new Map<string, string[]>();
          const answer = (all: boolean): void => {
            for (const w of [...waiting]) {
              if (!all && w.left-- > 0) continue;
              waiting.splice(waiting.indexOf(w), 1);
              // Every other call denied: both answers take the run on.
              w.request.calls.forEach((c, i) => {
                if (i % 2 === 0) w.request.approve(c.callId);
                else w.request.deny(c.callId, 'no');
              });
            }
          };
          const report = await runBatch(
            asks.map((a, i) => ({ id: `t${i}`, input: 'go', agent: agentFor(a) })),
            {
              concurrency,
              table: TABLE,
              approve: { rm: true },
              logger: false,
              onApproval: (request) => void waiting.push({ request, left: delays[asked++ % delays.length]! }),
              onProgress: (p) => {
                if (p.running > concurrency || p.running < 0) over += 1;
                const e = p.event;
                if (e.type !== 'skipped') {
                  const id = e.type === 'finished' ? e.run.id : e.id;
                  events.set(id, [...(events.get(id) ?? []), e.type]);
                }
                // With no run in a slot, nothing else would happen: every answer is given then.
                const idle = p.running === 0;
                queueMicrotask(() => answer(idle));
              },
            },
          );
          expect(over).toBe(0);
          expect(report.runs.map((r) => r.outcome)).toEqual(asks.map(() => 'end_of_turn'));
          asks.forEach((a, i) => {
            const parks = Array.from({ length: a.length }, () => ['parked', 'unparked']).flat();
            expect(events.get(`t${i}`)).toEqual(['started', ...parks, 'finished']);
            const calls = a.reduce((x, y) => x + y, 0);
            if (a.length === 0) expect(report.runs[i]!.approval).toBeUndefined();
            else expect(report.runs[i]!.approval).toMatchObject({ waits: a.length, calls });
          });
        },
      ),
      { numRuns: 60 },
    );
  });
});
