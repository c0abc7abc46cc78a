// StepMirror.tool(call, run, how): the one step an integration needs for a tool call. Served
// from the journal in a resumed run, else gated, run and recorded; each default and each hook.
import type { ToolCall } from '../../lib/agent/AgentLoop';
import { StepMirror } from '../../lib/agent/StepMirror';
import type { RecordedLine } from '../../lib/agent/journal/RunRecording';
import type { JournalEntry } from '../../lib/agent/journal/JournalEntry';
import { BudgetExceededError, TurnCancelledError } from '../../lib/agent/TurnError';

const COST = { inputTokens: 10, outputTokens: 5, costUsd: 0.1 };
const CALL = { id: 'c1', name: 'write', input: { path: 'a.txt' } };
const FIRST = { id: 'c0', name: 'read', input: {} };

/** The journal of a run cut after its first response and its tool's result (`status`: how the tool ended). */
function journalOf(status: 'ok' | 'error'): RecordedLine[] {
  return [
    {
      type: 'llm',
      turn: 1,
      operation: 'sendUserMessage',
      attempt: 1,
      input: { kind: 'user_message', message: 'go' },
      response: { toolCalls: [CALL], usage: COST },
      costUsd: 0.1,
    },
    {
      type: 'tool',
      turn: 1,
      call: CALL,
      status,
      result: {
        callId: 'c1',
        output: status === 'ok' ? 'written' : 'disk full',
        ...(status === 'error' && { isError: true }),
      },
    },
  ];
}

/** A mirror whose run has reported a response with `CALL`: the tool call comes next. */
async function atToolCall(
  options: ConstructorParameters<typeof StepMirror>[0] = {},
  calls: ToolCall[] = [CALL],
): Promise<{
  mirror: StepMirror;
  lines: JournalEntry[];
}> {
  const lines: JournalEntry[] = [];
  const mirror = new StepMirror({
    logger: false,
    journal: true,
    sink: { write: () => undefined, journal: (entry: JournalEntry) => void lines.push(entry) },
    ...options,
  });
  mirror.runStart('go');
  expect(await mirror.modelCallStart()).toBeUndefined();
  mirror.modelResponse({ toolCalls: calls, usage: COST });
  return { mirror, lines };
}

/** A resumed mirror whose first response was served from `journal`: its tool call is served next. */
function served(journal: RecordedLine[], resumeTools?: { rerun: string[] }): StepMirror {
  const mirror = new StepMirror({
    logger: false,
    resumeFrom: { journal },
    ...(resumeTools === undefined ? {} : { resumeTools }),
  });
  mirror.runStart('go');
  expect(mirror.recordedResponse()).toMatchObject({ toolCalls: [CALL] });
  return mirror;
}

const toolLines = (lines: JournalEntry[]) => lines.filter((l) => l.type === 'tool');

describe('StepMirror.tool', () => {
  it('runs the call, records its output and resolves to what run returned; the run goes on to its next call', async () => {
    const { mirror, lines } = await atToolCall();
    const ran: string[] = [];
    const value = await mirror.tool(CALL, () => (ran.push('write'), { bytes: 3 }));
    expect(value).toEqual({ bytes: 3 });
    expect(ran).toEqual(['write']);
    expect(toolLines(lines)).toMatchObject([{ status: 'ok', result: { callId: 'c1', output: '{"bytes":3}' } }]);
    expect(mirror.usage).toMatchObject({ toolCalls: 1 });
    expect(await mirror.modelCallStart()).toBeUndefined();
    mirror.modelResponse({ text: 'done', usage: COST });
    expect(mirror.runEnd()).toMatchObject({ outcome: 'end_of_turn', text: 'done' });
  });

  it('keeps a string output as it is, nothing as null, and what an output hook says', async () => {
    const outputs: string[] = [];
    for (const [value, how] of [
      ['plain text', undefined],
      [undefined, undefined],
      [{ name: 'next' }, { output: (v: { name: string }) => `handed off to ${v.name}` }],
    ] as const) {
      const { mirror, lines } = await atToolCall();
      await mirror.tool(CALL, () => value as unknown, how as never);
      outputs.push((toolLines(lines)[0]!.result as { output: string }).output);
    }
    expect(outputs).toEqual(['plain text', 'null', 'handed off to next']);
  });

  it('marks json the output of a value JSON writes whole, and only that: a resumed run is served it as the value', async () => {
    const shared = { n: 1 };
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    const kept: Array<{ output: string; json: boolean }> = [];
    for (const value of ['text', { a: shared, b: shared }, [1, 'two'], 3, cycle, 10n, undefined, () => 1]) {
      const { mirror, lines } = await atToolCall();
      await mirror.tool(CALL, () => value as unknown);
      const line = toolLines(lines)[0] as { json?: boolean; result: { output: string } };
      kept.push({ output: line.result.output, json: line.json === true });
    }
    expect(kept).toEqual([
      { output: 'text', json: false },
      // A part shared twice is written in full, as a provider is sent it.
      { output: '{"a":{"n":1},"b":{"n":1}}', json: true },
      { output: '[1,"two"]', json: true },
      { output: '3', json: true },
      // What JSON cannot write is text, never served as a value it was not.
      { output: '{"self":"[Circular]"}', json: false },
      { output: '"10n"', json: false },
      { output: 'null', json: false },
      { output: '() => 1', json: false },
    ]);
    // An output hook's text is its text.
    const { mirror, lines } = await atToolCall();
    await mirror.tool(CALL, () => ({ a: 1 }), { output: (v) => JSON.stringify(v) });
    expect(toolLines(lines)[0]).not.toHaveProperty('json');

    // Served, the answer says so (a served hook parses it), and the served line keeps the mark.
    const journal = journalOf('ok').map((l) =>
      l.type === 'tool' ? { ...l, json: true, result: { callId: 'c1', output: '{"bytes":3}' } } : l,
    );
    const servedLines: JournalEntry[] = [];
    const resumed = new StepMirror({
      logger: false,
      resumeFrom: { journal },
      journal: true,
      sink: { write: () => undefined, journal: (entry: JournalEntry) => void servedLines.push(entry) },
    });
    resumed.runStart('go');
    resumed.recordedResponse();
    const answers: unknown[] = [];
    const value = await resumed.tool(CALL, () => 'ran', {
      served: (answer) => (answers.push(answer), JSON.parse(answer.output) as unknown),
    });
    expect(value).toEqual({ bytes: 3 });
    expect(answers).toEqual([{ output: '{"bytes":3}', isError: false, json: true }]);
    expect(toolLines(servedLines)).toMatchObject([{ json: true, fromJournal: true }]);
  });

  it('records a throwing output hook by name and still resolves to the value: the tool ran', async () => {
    const { mirror, lines } = await atToolCall();
    const value = await mirror.tool(CALL, () => 7, {
      output: () => {
        throw new Error('no text for it');
      },
    });
    expect(value).toBe(7);
    expect(toolLines(lines)[0]).toMatchObject({
      status: 'ok',
      result: { output: '[output(value) threw: no text for it]' },
    });
  });

  it('records a tool that throws as an error result and rethrows what it threw', async () => {
    const { mirror, lines } = await atToolCall();
    const thrown = new Error('EACCES');
    await expect(
      mirror.tool(CALL, () => {
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    expect(toolLines(lines)).toMatchObject([
      { status: 'error', result: { output: expect.stringContaining('EACCES') } },
    ]);
  });

  it('refuses a call under a spent budget without running it: the default throws the reason, a refuse hook gets it', async () => {
    for (const hooked of [false, true]) {
      // One tool call allowed: the first of the response's two runs, the second is refused.
      const { mirror, lines } = await atToolCall({ budget: { maxToolCalls: 1 } }, [FIRST, CALL]);
      await mirror.tool(FIRST, () => 'read');
      const ran: string[] = [];
      const refused: unknown[] = [];
      const how = hooked
        ? {
            refuse: (stop: unknown): never => {
              refused.push(stop);
              throw new Error('stopped by the framework');
            },
          }
        : undefined;
      const outcome = mirror.tool(CALL, () => void ran.push('write'), how);
      if (hooked) await expect(outcome).rejects.toThrow('stopped by the framework');
      else await expect(outcome).rejects.toBeInstanceOf(BudgetExceededError);
      expect(ran).toEqual([]);
      expect(refused).toHaveLength(hooked ? 1 : 0);
      if (hooked) expect(refused[0]).toBeInstanceOf(BudgetExceededError);
      expect(toolLines(lines)).toMatchObject([{ status: 'ok' }, { status: 'not_run' }]);
    }
  });

  it('refuses a call of a cancelled run without running it', async () => {
    const { mirror } = await atToolCall();
    mirror.cancel('the user left');
    const ran: string[] = [];
    await expect(mirror.tool(CALL, () => void ran.push('write'))).rejects.toBeInstanceOf(TurnCancelledError);
    expect(ran).toEqual([]);
    expect(mirror.result).toMatchObject({ outcome: 'cancelled' });
  });

  it('serves a resumed run its recorded result without running the tool; an error result is thrown by default', async () => {
    const ok = served(journalOf('ok'));
    const ran: string[] = [];
    expect(await ok.tool(CALL, () => (ran.push('write'), 'written again'))).toBe('written');
    expect(ok.resumed).toMatchObject({ servedTools: 1 });

    const failed = served(journalOf('error'));
    await expect(failed.tool(CALL, () => (ran.push('write'), 'written again'))).rejects.toThrow('disk full');
    expect(ran).toEqual([]);
  });

  it('gives a served result as the served hook makes it (an error result as text, as some SDKs report one)', async () => {
    const mirror = served(journalOf('error'));
    const answers: unknown[] = [];
    const value = await mirror.tool(CALL, () => 'written again', {
      served: (answer) => (answers.push(answer), `error: ${answer.output}`),
    });
    expect(value).toBe('error: disk full');
    expect(answers).toEqual([{ output: 'disk full', isError: true }]);
  });

  it('runs again a recorded call the tool policy reruns, and records it', async () => {
    const mirror = served(journalOf('ok'), { rerun: ['write'] });
    const ran: string[] = [];
    expect(await mirror.tool(CALL, () => (ran.push('write'), 'written again'))).toBe('written again');
    expect(ran).toEqual(['write']);
    expect(mirror.resumed).toMatchObject({ servedTools: 0, rerunTools: 1 });
  });

  it('refuses bad arguments by name before anything is reported', async () => {
    const { mirror, lines } = await atToolCall();
    await expect(mirror.tool(CALL, 'write' as never)).rejects.toThrow(
      'Expected `run` to be a function that runs the tool call',
    );
    await expect(mirror.tool(CALL, () => 1, { serve: () => 1 } as never)).rejects.toThrow(
      'Expected `how.serve` to be left out: StepMirror.tool takes served, refuse and output',
    );
    await expect(mirror.tool(CALL, () => 1, { served: 'text' } as never)).rejects.toThrow(
      'Expected `how.served` to be a function, or left out',
    );
    await expect(mirror.tool(CALL, () => 1, null as never)).rejects.toThrow(
      'Expected `how` to be an object { served?, refuse?, output? }',
    );
    expect(toolLines(lines)).toEqual([]);
    expect(await mirror.tool(CALL, () => 'ok')).toBe('ok');
  });
});
