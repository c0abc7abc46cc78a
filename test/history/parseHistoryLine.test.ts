import { toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import { parseHistoryLine } from '../../lib/history/parseHistoryLine';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

const record = {
  seq: 3,
  from: 'SendingToLLM',
  to: 'ProcessingLLMResponse',
  description: 'reply',
  at: 1000,
  durationMs: 20,
  forced: false,
};

function reason(text: string): string {
  const parsed = parseHistoryLine(text, 7);
  if (parsed.ok) throw new Error(`expected a failure for ${text}`);
  return parsed.reason;
}

describe('parseHistoryLine()', () => {
  it('parses a record line into exactly the TransitionRecord fields, with its line number', () => {
    const parsed = parseHistoryLine(JSON.stringify({ ...record, data: { tool: 'bash' }, extra: 'dropped' }), 7);
    expect(parsed).toEqual({
      ok: true,
      entry: { kind: 'record', line: 7, record: { ...record, data: { tool: 'bash' } } },
    });
  });

  it('parses meta, rejected and reset lines by their type', () => {
    const meta = {
      type: 'meta',
      version: '0.1.0',
      runId: 'r1',
      startedAt: 5,
      table: toHistoryTableInfo(DEFAULT_TABLE),
      metadata: { task: 42 },
    };
    const parsedMeta = parseHistoryLine(JSON.stringify(meta), 1);
    expect(parsedMeta.ok && parsedMeta.entry.kind === 'meta' && parsedMeta.entry.meta).toEqual(meta);
    expect(parsedMeta.ok && parsedMeta.entry.kind === 'meta' && parsedMeta.entry.table.states.Error?.isError).toBe(
      true,
    );

    const rejected = {
      type: 'rejected',
      from: 'RunningTool',
      to: 'Cancelled',
      allowed: ['CheckingGitCommits', 'Error'],
      description: 'stop',
      at: 9,
      seq: 4,
    };
    expect(parseHistoryLine(JSON.stringify(rejected), 2)).toEqual({
      ok: true,
      entry: { kind: 'rejected', line: 2, rejected },
    });

    const reset = { type: 'reset', from: 'Error', at: 10, seq: 4 };
    expect(parseHistoryLine(JSON.stringify(reset), 3)).toEqual({ ok: true, entry: { kind: 'reset', line: 3, reset } });
  });

  it('says why a line is not JSON, or not an object', () => {
    expect(reason('{"seq":1,"fro')).toMatch(/^not JSON/);
    expect(reason('[1,2]')).toBe('expected a JSON object, got `[1,2]` (array)');
    expect(reason('42')).toBe('expected a JSON object, got `42` (number)');
  });

  it('names the bad field and its value', () => {
    expect(reason(JSON.stringify({ ...record, seq: '3' }))).toBe(
      'field "seq" must be a positive integer, got `3` (string)',
    );
    expect(reason(JSON.stringify({ ...record, seq: 0 }))).toBe(
      'field "seq" must be a positive integer, got `0` (number)',
    );
    expect(reason(JSON.stringify({ ...record, to: undefined }))).toBe(
      'field "to" must be a state name, got `undefined`',
    );
    expect(reason(JSON.stringify({ ...record, from: '' }))).toBe('field "from" must be a state name, got `` (string)');
    expect(reason(JSON.stringify({ ...record, description: 5 }))).toBe(
      'field "description" must be a string, got `5` (number)',
    );
    expect(reason(JSON.stringify({ ...record, at: null }))).toBe('field "at" must be a finite number, got `null`');
    expect(reason(JSON.stringify({ ...record, durationMs: 'x' }))).toBe(
      'field "durationMs" must be a finite number, got `x` (string)',
    );
    expect(reason(JSON.stringify({ ...record, forced: 'no' }))).toBe(
      'field "forced" must be true or false, got `no` (string)',
    );
    expect(reason(JSON.stringify({ type: 'reset', from: 'Error', at: 1, seq: -1 }))).toBe(
      'field "seq" must be a non-negative integer, got `-1` (number)',
    );
    expect(reason(JSON.stringify({ type: 'rejected', from: 'A', to: 'B', allowed: 'C', description: '', at: 1 }))).toBe(
      'field "allowed" must be an array of state names, got `C` (string)',
    );
  });

  it('reads journal lines, checking the fields readers rely on and keeping the content', () => {
    const llm = {
      type: 'llm',
      seq: 2,
      turn: 1,
      operation: 'sendUserMessage',
      attempt: 1,
      startedAt: 5,
      endedAt: 9,
      input: { kind: 'user_message', message: 'hi' },
      response: { text: 'yo' },
    };
    expect(parseHistoryLine(JSON.stringify(llm), 3)).toEqual({
      ok: true,
      entry: { kind: 'journal', line: 3, journal: llm },
    });
    const tool = {
      type: 'tool',
      seq: 6,
      turn: 1,
      call: { id: 'c1', name: 'bash' },
      status: 'ok',
      startedAt: 1,
      endedAt: 2,
      result: { callId: 'c1', output: 'x' },
    };
    expect(parseHistoryLine(JSON.stringify(tool), 9)).toMatchObject({
      ok: true,
      entry: { kind: 'journal', journal: tool },
    });
    expect(reason(JSON.stringify({ ...llm, operation: 'send' }))).toBe(
      "field \"operation\" must be 'sendUserMessage', 'sendToolResults', or a hook ('compact', 'runTool'), got `send` (string)",
    );
    // A hook's call through ctx.llm: a ledger-only line naming the hook.
    expect(parseHistoryLine(JSON.stringify({ ...llm, operation: 'compact' }), 7).ok).toBe(true);
    expect(reason(JSON.stringify({ ...llm, attempt: 0 }))).toMatch(/^field "attempt" must be a positive integer/);
    expect(reason(JSON.stringify({ ...tool, call: { id: 'c1' } }))).toMatch(/^field "call\.name" must be a string/);
  });

  it('reads approval lines: which call, approved or denied (with why), when, by whom if known', () => {
    const approval = {
      type: 'approval',
      seq: 7,
      turn: 1,
      callId: 'c2',
      name: 'deploy',
      approved: false,
      reason: 'no',
      at: 4,
    };
    expect(parseHistoryLine(JSON.stringify(approval), 8)).toEqual({
      ok: true,
      entry: { kind: 'journal', line: 8, journal: approval },
    });
    expect(parseHistoryLine(JSON.stringify({ ...approval, approved: true, reason: undefined, by: 'ann' }), 8).ok).toBe(
      true,
    );
    expect(reason(JSON.stringify({ ...approval, approved: 'yes' }))).toBe(
      'field "approved" must be true or false, got `yes` (string)',
    );
    expect(reason(JSON.stringify({ ...approval, callId: 2 }))).toMatch(/^field "callId" must be a string/);
    expect(reason(JSON.stringify({ ...approval, by: 3 }))).toMatch(/^field "by" must be a string/);
  });

  it("reads an approval line that asks (asked: true, no answer): the call, its input, when; an answer's approved is refused on it", () => {
    const asked = {
      type: 'approval',
      seq: 6,
      turn: 1,
      callId: 'c2',
      name: 'deploy',
      input: { target: 'p' },
      asked: true,
      at: 4,
    };
    expect(parseHistoryLine(JSON.stringify(asked), 7)).toEqual({
      ok: true,
      entry: { kind: 'journal', line: 7, journal: asked },
    });
    expect(reason(JSON.stringify({ ...asked, approved: true }))).toMatch(
      /^field "approved" must be absent on a line with asked: true/,
    );
    expect(reason(JSON.stringify({ ...asked, asked: false }))).toMatch(
      /^field "asked" must be true \(a question asked inside a tool\), or absent/,
    );
    expect(reason(JSON.stringify({ ...asked, at: 'now' }))).toMatch(/^field "at" must be/);
  });

  it('rejects an unknown line type, and a meta line whose table is not sound', () => {
    expect(reason('{"type":"checkpoint"}')).toBe(
      'unknown line type `checkpoint` (string) (expected meta, rejected, reset, llm, tool, reserve, approval, http, or none for a record)',
    );
    const table = toHistoryTableInfo(DEFAULT_TABLE);
    const meta = {
      type: 'meta',
      version: '0.1.0',
      runId: 'r',
      startedAt: 1,
      table: { ...table, edges: [...table.edges, ['Ready', 'Nowhere']] },
    };
    expect(reason(JSON.stringify(meta))).toMatch(/^the table in the meta line is not sound: .*Nowhere/);
    expect(reason(JSON.stringify({ ...meta, table: [] }))).toMatch(/^field "table" must be an object/);
  });
});
