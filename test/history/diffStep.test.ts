// diffStep: which lines are compared, what is left out of them, and how a difference between
// two steps is named.
import type { HistoryEntry } from '../../lib/history/HistoryEntry';
import {
  differingFields,
  divergenceKind,
  sameStep,
  stepKey,
  stepOf,
  stepView,
  type DiffStep,
} from '../../lib/history/diffStep';

const step = (entry: HistoryEntry): DiffStep => stepOf(entry)!;
const llm = (fields: Record<string, unknown>): DiffStep =>
  step({
    kind: 'journal',
    line: 4,
    journal: {
      type: 'llm',
      seq: 2,
      turn: 1,
      operation: 'sendUserMessage',
      attempt: 1,
      startedAt: 1,
      endedAt: 2,
      ...fields,
    },
  });
const http = (request: unknown, response: unknown): DiffStep =>
  step({
    kind: 'http',
    line: 3,
    exchange: { type: 'http', seq: 0, call: 1, startedAt: 5, endedAt: 9, request, response } as never,
  });

describe('diffStep', () => {
  it('shows an approval question (asked: true) as asked, and an answer as approved or denied', () => {
    const approval = (fields: Record<string, unknown>): DiffStep =>
      step({
        kind: 'journal',
        line: 5,
        journal: { type: 'approval', seq: 3, turn: 1, callId: 'c2', name: 'deploy', at: 4, ...fields },
      });
    expect(stepView(approval({ asked: true, input: { target: 'prod' } })).text).toBe(
      'deploy (c2) asked for approval: {"target":"prod"}',
    );
    expect(stepView(approval({ approved: true })).text).toBe('approval of deploy (c2): approved');
    expect(stepView(approval({ approved: false, reason: 'no' })).text).toBe('approval of deploy (c2): denied: no');
  });

  it('leaves out the meta line and ledger reservations', () => {
    expect(stepOf({ kind: 'journal', line: 2, journal: { type: 'reserve', seq: 1, turn: 1, at: 3 } })).toBeUndefined();
    expect(stepOf({ kind: 'meta', line: 1 } as unknown as HistoryEntry)).toBeUndefined();
  });

  it('compares no timestamp, duration or run id, at any depth', () => {
    const a = step({
      kind: 'record',
      line: 2,
      record: {
        seq: 1,
        from: 'A',
        to: 'B',
        description: 'go',
        at: 10,
        durationMs: 3,
        forced: false,
        data: { usage: { wallMs: 4, llmCalls: 1 }, results: [{ ms: 2 }] },
      },
    });
    const b = step({
      kind: 'record',
      line: 2,
      record: {
        seq: 1,
        from: 'A',
        to: 'B',
        description: 'go',
        at: 99,
        durationMs: 80,
        forced: false,
        data: { usage: { wallMs: 70, llmCalls: 1 }, results: [{ ms: 60 }] },
      },
    });
    expect(sameStep(a, b)).toBe(true);
    expect(differingFields(a.value, b.value)).toEqual([]);
    // Nor the order of fields, nor a field left undefined; a field present on one side alone counts.
    expect(sameStep(llm({ input: { a: 1, b: 2 } }), llm({ input: { b: 2, a: 1 }, note: undefined }))).toBe(true);
    expect(sameStep(llm({ input: { a: 1 } }), llm({ input: { a: 1, b: null } }))).toBe(false);
    expect(sameStep(llm({ input: [1, 2] }), llm({ input: { 0: 1, 1: 2 } }))).toBe(false);
    // A batch's digest of a run agrees: the same key for steps alike, whatever their fields' order.
    expect(stepKey(llm({ input: { a: 1, b: 2 }, endedAt: 5 }))).toBe(
      stepKey(llm({ input: { b: 2, a: 1 }, endedAt: 9 })),
    );
    expect(stepKey(llm({ input: { a: 1 } }))).not.toBe(stepKey(llm({ input: { a: 2 } })));
    expect(stepKey(a)).toBe(stepKey(b));
  });

  it('names a request, a response, a tool result, a move and an end', () => {
    expect(divergenceKind(llm({ input: { message: 'x' } }), llm({ input: { message: 'y' } }))).toBe('request');
    expect(
      divergenceKind(llm({ input: 1, response: { text: 'x' } }), llm({ input: 1, error: { message: 'no' } })),
    ).toBe('response');
    expect(
      divergenceKind(
        http({ path: '/v1/chat', body: { a: 1 } }, { status: 200 }),
        http({ path: '/v1/chat', body: { a: 2 } }, { status: 200 }),
      ),
    ).toBe('request');
    expect(
      divergenceKind(http({ path: '/v1/chat' }, { status: 200 }), http({ path: '/v1/chat' }, { status: 429 })),
    ).toBe('response');
    const tool = (call: unknown, status: string): DiffStep =>
      step({ kind: 'journal', line: 9, journal: { type: 'tool', seq: 6, turn: 1, call: call as never, status } });
    expect(divergenceKind(tool({ id: 'c', name: 'grep' }, 'ok'), tool({ id: 'c', name: 'grep' }, 'error'))).toBe(
      'tool_result',
    );
    expect(divergenceKind(tool({ id: 'c', name: 'grep' }, 'ok'), tool({ id: 'c', name: 'find' }, 'ok'))).toBe(
      'response',
    );
    expect(divergenceKind(llm({}), tool({ id: 'c', name: 'grep' }, 'ok'))).toBe('move');
    expect(divergenceKind(llm({}), undefined)).toBe('end');
  });

  it('says which fields differ, each side as JSON, at most the limit', () => {
    const fields = differingFields(
      { a: 1, b: { c: 'x', d: [1, 2] }, at: 5 },
      { a: 2, b: { c: 'y', d: [1, 3] }, at: 6 },
      2,
    );
    expect(fields).toEqual([
      { path: 'a', a: '1', b: '2' },
      { path: 'b.c', a: '"x"', b: '"y"' },
    ]);
    expect(differingFields({ a: 1 }, {})).toEqual([{ path: 'a', a: '1', b: 'undefined' }]);
    expect(differingFields({ d: [1, 2] }, { d: [1, 3] })).toEqual([{ path: 'd[1]', a: '2', b: '3' }]);
  });
});
