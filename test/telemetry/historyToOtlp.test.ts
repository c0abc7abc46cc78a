import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent, type AgentScript } from '../../lib/agent/createScriptedAgent';
import type { HistoryItem } from '../../lib/history/HistoryEntry';
import { toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import { loadHistory } from '../../lib/history/loadHistory';
import { extendTable } from '../../lib/machine/extendTable';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { historyToOtlp } from '../../lib/telemetry/historyToOtlp';
import type { OtlpSpan, OtlpTraceExport } from '../../lib/telemetry/OtlpJson';
import type { AgentLoop } from '../../lib/agent/AgentLoop';
import { T0 } from '../fixtures/agentRun';
import { ONE_RUN, threeFiguresTask, THREE_FIGURES } from '../helpers/threeFigures';
import { NEW_BUDGET_RUN, OLD_BUDGET_RUN, writeHistoryFile } from '../fixtures/historyFiles';
import { manualClock } from '../helpers/manualClock';
import { otlpShapeProblems, roundTrip } from '../helpers/otlpShape';

/** Runs scripted turns under a clock that only moves when the script waits; returns the full history. */
async function run(
  script: Omit<AgentScript, 'sleep'>,
  inputs: string[],
  options: { budget?: object; cancelAfterMs?: number } = {},
): Promise<TransitionRecord<string>[]> {
  const clock = manualClock();
  const sleep = async (ms: number): Promise<void> => void clock.advance(ms);
  const records: TransitionRecord<string>[] = [];
  const agent = new AgentWithStateMachine(createScriptedAgent({ ...script, sleep }), {
    clock: clock.now,
    sleep,
    random: () => 0,
    logger: false,
    sink: { write: (r) => void records.push(r) },
    ...(options.budget === undefined ? {} : { budget: options.budget }),
  });
  for (const input of inputs) await agent.runTurn(input);
  return records;
}

function spans(otlp: OtlpTraceExport): OtlpSpan[] {
  return otlp.resourceSpans[0]!.scopeSpans[0]!.spans;
}

function attr(span: OtlpSpan, key: string): unknown {
  const kv = span.attributes.find((a) => a.key === key);
  if (kv === undefined) return undefined;
  const v = kv.value as Record<string, unknown>;
  if ('intValue' in v) return Number(v['intValue']);
  if ('arrayValue' in v)
    return (v['arrayValue'] as { values: Array<{ stringValue: string }> }).values.map((x) => x.stringValue);
  return Object.values(v)[0];
}

/** name, kind and parent name of each span: the tree as a list. */
function tree(list: OtlpSpan[]): string[] {
  const byId = new Map(list.map((s) => [s.spanId, s]));
  return list.map(
    (s) => `${s.name} [${s.kind}]${s.parentSpanId === undefined ? '' : ` < ${byId.get(s.parentSpanId)?.name ?? '?'}`}`,
  );
}

describe('historyToOtlp()', () => {
  it('historyToOtlp() rebuilds a text turn as one trace: invoke_agent with a chat child, moves as events', async () => {
    const history = await run(
      { replies: [{ text: 'hi', usage: { inputTokens: 10, outputTokens: 3, costUsd: 0.002 }, delayMs: 400 }] },
      ['hello'],
    );
    const otlp = historyToOtlp(history, { agentName: 'helper', providerName: 'openai', runId: 'r1' });
    const list = spans(otlp);
    expect(tree(list)).toEqual(['invoke_agent helper [1]', 'chat [3] < invoke_agent helper']);
    const [turn, chat] = list as [OtlpSpan, OtlpSpan];
    expect(chat.traceId).toBe(turn.traceId);
    expect(attr(turn, 'gen_ai.operation.name')).toBe('invoke_agent');
    expect(attr(turn, 'gen_ai.provider.name')).toBe('openai');
    expect(attr(turn, 'gen_ai.agent.name')).toBe('helper');
    expect(attr(turn, 'gen_ai.usage.input_tokens')).toBe(10);
    expect(attr(turn, 'gen_ai.usage.output_tokens')).toBe(3);
    expect(attr(turn, 'agent_state_machine.usage.cost_usd')).toBe(0.002);
    expect(attr(turn, 'agent_state_machine.outcome')).toBe('end_of_turn');
    expect(turn.status).toEqual({ code: 0 });
    expect(
      turn.events.map(
        (e) =>
          `${String(attr(e as unknown as OtlpSpan, 'agent_state_machine.transition.from'))}>${String(attr(e as unknown as OtlpSpan, 'agent_state_machine.transition.to'))}`,
      ),
    ).toEqual([
      'Ready>WaitingForUserInput',
      'WaitingForUserInput>SendingToLLM',
      'SendingToLLM>ProcessingLLMResponse',
      'ProcessingLLMResponse>EndOfTurn',
    ]);
    expect(BigInt(chat.endTimeUnixNano) - BigInt(chat.startTimeUnixNano)).toBe(400_000_000n);
    expect(attr(chat, 'gen_ai.operation.name')).toBe('chat');
    expect(attr(chat, 'gen_ai.usage.input_tokens')).toBe(10);
    expect(attr(chat, 'agent_state_machine.llm.billed_usd')).toBe(0.002);
    expect(otlpShapeProblems(otlp)).toEqual([]);
  });

  it('historyToOtlp() gives each tool call an execute_tool span under the turn, one after the other, with errors marked', async () => {
    const history = await run(
      {
        replies: [
          {
            toolCalls: [
              { id: 'c1', name: 'read' },
              { id: 'c2', name: 'grep' },
            ],
          },
          { text: 'done' },
        ],
        tools: { read: { output: 'x', delayMs: 100 }, grep: { error: 'no such file', delayMs: 50 } },
      },
      ['look'],
    );
    const list = spans(historyToOtlp(history));
    expect(tree(list)).toEqual([
      'invoke_agent [1]',
      'chat [3] < invoke_agent',
      'execute_tool read [1] < invoke_agent',
      'execute_tool grep [1] < invoke_agent',
      'chat [3] < invoke_agent',
    ]);
    const read = list[2]!;
    const grep = list[3]!;
    expect(attr(read, 'gen_ai.tool.name')).toBe('read');
    expect(attr(read, 'gen_ai.tool.call.id')).toBe('c1');
    expect(read.status.code).toBe(0);
    expect(attr(grep, 'error.type')).toBe('tool_error');
    expect(grep.status).toEqual({ code: 2, message: 'no such file' });
    expect(BigInt(grep.startTimeUnixNano)).toBe(BigInt(read.endTimeUnixNano));
    expect(BigInt(grep.endTimeUnixNano) - BigInt(grep.startTimeUnixNano)).toBe(50_000_000n);
  });

  it('historyToOtlp() starts tools that ran at once together (toolConcurrency)', async () => {
    const clock = manualClock();
    const records: TransitionRecord<string>[] = [];
    // Each tool ends 100 ms after both have started: their times add up to more than RunningTool lasted.
    let started = 0;
    let release: () => void = () => undefined;
    const both = new Promise<void>((resolve) => (release = resolve));
    const tool = async (call: { id: string }) => {
      started += 1;
      if (started === 2) {
        clock.advance(100);
        release();
      }
      await both;
      return { callId: call.id, output: 'ok' };
    };
    const agent = new AgentWithStateMachine(
      createScriptedAgent({
        replies: [
          {
            toolCalls: [
              { id: 'c1', name: 'a' },
              { id: 'c2', name: 'b' },
            ],
          },
          { text: 'done' },
        ],
        tools: { a: tool, b: tool },
        sleep: async () => undefined,
      }),
      { clock: clock.now, logger: false, toolConcurrency: 2, sink: { write: (r) => void records.push(r) } },
    );
    await agent.runTurn('go');
    const tools = spans(historyToOtlp(records)).filter((s) => s.name.startsWith('execute_tool'));
    expect(tools.map((s) => s.name)).toEqual(['execute_tool a', 'execute_tool b']);
    expect(tools[0]!.startTimeUnixNano).toBe(tools[1]!.startTimeUnixNano);
    expect(BigInt(tools[1]!.endTimeUnixNano) - BigInt(tools[1]!.startTimeUnixNano)).toBe(100_000_000n);
  });

  it('historyToOtlp() marks a failed LLM call and its turn as errors, with an event per failed attempt', async () => {
    const history = await run(
      { replies: [{ error: '529 overloaded' }, { error: '529 overloaded' }, { error: '529 overloaded' }] },
      ['go'],
    );
    const list = spans(historyToOtlp(history));
    expect(tree(list)).toEqual(['invoke_agent [1]', 'chat [3] < invoke_agent']);
    const [turn, chat] = list as [OtlpSpan, OtlpSpan];
    expect(chat.events.map((e) => e.name)).toEqual(Array(3).fill('agent_state_machine.llm.attempt_failed'));
    expect(chat.status.code).toBe(2);
    expect(attr(chat, 'error.type')).toBe('llm_call_failed');
    expect(attr(turn, 'error.type')).toBe('error');
    expect(turn.status.code).toBe(2);
  });

  it('historyToOtlp() reads a budget stop with the limit that stopped it', async () => {
    const history = await run(
      {
        replies: [
          { toolCalls: [{ id: 'c1', name: 'read' }], usage: { inputTokens: 5, outputTokens: 5, costUsd: 2 } },
          { text: 'never' },
        ],
        tools: { read: { output: 'x' } },
      },
      ['spend'],
      { budget: { maxCostUsd: 1, strict: false } },
    );
    const turn = spans(historyToOtlp(history))[0]!;
    expect(attr(turn, 'agent_state_machine.outcome')).toBe('budget_exceeded');
    expect(attr(turn, 'error.type')).toBe('budget_exceeded');
    expect(attr(turn, 'agent_state_machine.budget.stopped_by')).toBe('maxCostUsd');
    expect(attr(turn, 'agent_state_machine.budget.used')).toBe(2);
    expect(attr(turn, 'agent_state_machine.budget.max')).toBe(1);
  });

  it('historyToOtlp() makes one trace per turn and ends a turn the file cuts off as incomplete', async () => {
    const history = await run({ replies: [{ text: 'a' }, { text: 'b' }] }, ['one', 'two']);
    const list = spans(historyToOtlp(history));
    const turns = list.filter((s) => s.name === 'invoke_agent');
    expect(turns).toHaveLength(2);
    expect(turns[0]!.traceId).not.toBe(turns[1]!.traceId);
    expect(turns.map((t) => attr(t, 'agent_state_machine.turn'))).toEqual([1, 2]);

    const cut = spans(historyToOtlp(history.slice(0, 2)))[0]!;
    expect(attr(cut, 'error.type')).toBe('incomplete');
    expect(cut.status).toEqual({ code: 2, message: 'the history ends mid-turn' });
  });

  it('historyToOtlp() is deterministic and its JSON is what the SDK serializer writes for the same spans', async () => {
    const history = await run(
      {
        replies: [
          { toolCalls: [{ id: 'c1', name: 'read' }], usage: { inputTokens: 7, outputTokens: 1, costUsd: 0.5 } },
          { text: 'ok' },
        ],
        tools: { read: { output: 'x', delayMs: 10 } },
      },
      ['x'],
    );
    const otlp = historyToOtlp(history, { agentName: 'a', providerName: 'anthropic' });
    expect(historyToOtlp(history, { agentName: 'a', providerName: 'anthropic' })).toEqual(otlp);
    expect(otlpShapeProblems(otlp)).toEqual([]);
    const sdk = roundTrip(otlp) as unknown as OtlpTraceExport;
    const ours = spans(otlp);
    const theirs = spans(sdk);
    expect(theirs).toHaveLength(ours.length);
    theirs.forEach((s, i) => {
      const o = ours[i]!;
      expect({
        ...s,
        attributes: sortKv(s.attributes),
        events: s.events.map((e) => ({ ...e, attributes: sortKv(e.attributes) })),
      }).toMatchObject({
        traceId: o.traceId,
        spanId: o.spanId,
        ...(o.parentSpanId === undefined ? {} : { parentSpanId: o.parentSpanId }),
        name: o.name,
        kind: o.kind,
        startTimeUnixNano: o.startTimeUnixNano,
        endTimeUnixNano: o.endTimeUnixNano,
        attributes: sortKv(o.attributes),
        events: o.events.map((e) => ({ ...e, attributes: sortKv(e.attributes) })),
        status: o.status,
      });
    });
  });

  it('historyToOtlp() gives a file whose terminal records carry outcome and usage the spans it gives the same file without them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-otlp-'));
    try {
      const old = historyToOtlp([...(await loadHistory(writeHistoryFile(dir, 'old.jsonl', OLD_BUDGET_RUN))).entries], {
        runId: 'r',
      });
      const fresh = historyToOtlp(
        [...(await loadHistory(writeHistoryFile(dir, 'new.jsonl', NEW_BUDGET_RUN))).entries],
        { runId: 'r' },
      );
      expect(fresh).toEqual(old);
      const turns = spans(old).filter((s) => s.name === 'invoke_agent');
      expect(turns.map((t) => attr(t, 'agent_state_machine.outcome'))).toEqual(['end_of_turn', 'budget_exceeded']);
      expect(turns.map((t) => attr(t, 'agent_state_machine.usage.cost_usd'))).toEqual([0.6, 0]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('historyToOtlp() reads a failed call whose record carries the outcome and the totals as a failed call, not as a response', async () => {
    const history = await run(
      { replies: [{ error: '529 overloaded' }, { error: '529 overloaded' }, { error: '529 overloaded' }] },
      ['go'],
    );
    const failing = history.at(-1)!;
    // As the writer that records outcome and usage writes it: three attempts, no tokens.
    history[history.length - 1] = {
      ...failing,
      data: {
        ...(failing.data as object),
        outcome: 'error',
        usage: { inputTokens: 0, outputTokens: 0, costUsd: 0, toolCalls: 0, llmCalls: 3, wallMs: 1 },
      },
    };
    const [turn, chat] = spans(historyToOtlp(history)) as [OtlpSpan, OtlpSpan];
    expect(attr(chat, 'error.type')).toBe('llm_call_failed');
    expect(attr(chat, 'gen_ai.usage.input_tokens')).toBeUndefined();
    expect(attr(turn, 'error.type')).toBe('error');
    expect(attr(turn, 'agent_state_machine.usage.llm_calls')).toBe(3);
  });

  it('historyToOtlp() ends a turn at a custom terminal state of the file’s table, with the outcome its record says', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [
        {
          name: 'Paused',
          description: 'waits for a person',
          next: ['WaitingForUserInput'],
          isTerminal: true,
          isError: true,
        },
      ],
      edges: [['SendingToLLM', 'Paused']],
    });
    const meta: HistoryItem = {
      kind: 'meta',
      line: 1,
      meta: { type: 'meta', version: '0.1.0', runId: 'paused', startedAt: T0, table: toHistoryTableInfo(table) },
      table,
    };
    const move = (seq: number, from: string, to: string, data?: unknown): HistoryItem => ({
      kind: 'record',
      line: seq + 1,
      record: {
        seq,
        from,
        to,
        description: `${from} → ${to}`,
        at: T0 + seq,
        durationMs: 1,
        forced: false,
        ...(data === undefined ? {} : { data }),
      },
    });
    const otlp = historyToOtlp([
      meta,
      move(1, 'Ready', 'WaitingForUserInput'),
      move(2, 'WaitingForUserInput', 'SendingToLLM'),
      move(3, 'SendingToLLM', 'Paused', { outcome: 'cancelled' }),
      move(4, 'Paused', 'WaitingForUserInput'),
    ]);
    const turns = spans(otlp).filter((s) => s.name === 'invoke_agent');
    expect(turns).toHaveLength(2);
    expect(attr(turns[0]!, 'agent_state_machine.outcome')).toBe('cancelled');
    expect(turns[0]!.status).toEqual({ code: 2, message: 'SendingToLLM → Paused' });
  });

  it("historyToOtlp() puts a call's three figures of money apart, as the live tracer does: billed, uncertain and released under the chat span's own names, the turn's totals under the turn's", async () => {
    // A 429 (released, $0.01 hold), a 500 (uncertain at its $0.01 hold), then an answer billed $0.0006.
    const records: TransitionRecord<string>[] = [];
    const agent = new AgentWithStateMachine((threeFiguresTask('m').agent as () => AgentLoop)(), {
      logger: false,
      sleep: async () => undefined,
      sink: { write: (r) => void records.push(r) },
      pricing: THREE_FIGURES.pricing!,
      budget: { maxCostUsd: 1, strict: true },
      retry: { retries: 3, shouldRetry: () => true },
    });
    await agent.runTurn('go');
    const list = spans(historyToOtlp(records));
    const chat = list.find((s) => s.name.startsWith('chat'))!;
    expect(attr(chat, 'agent_state_machine.llm.billed_usd')).toBeCloseTo(ONE_RUN.costUsd - ONE_RUN.uncertainUsd, 10);
    expect(attr(chat, 'agent_state_machine.llm.uncertain_usd')).toBeCloseTo(ONE_RUN.uncertainUsd, 10);
    expect(attr(chat, 'agent_state_machine.llm.released_usd')).toBeCloseTo(ONE_RUN.releasedUsd, 10);
    // A sum over spans of one name counts each dollar once: the chat span carries none of the turn's names.
    expect(attr(chat, 'agent_state_machine.usage.cost_usd')).toBeUndefined();
    const turn = list.find((s) => s.name === 'invoke_agent')!;
    expect(attr(turn, 'agent_state_machine.usage.cost_usd')).toBeCloseTo(ONE_RUN.costUsd, 10);
    expect(attr(turn, 'agent_state_machine.usage.uncertain_usd')).toBeCloseTo(ONE_RUN.uncertainUsd, 10);
    expect(attr(turn, 'agent_state_machine.usage.released_usd')).toBeCloseTo(ONE_RUN.releasedUsd, 10);
  });

  it('historyToOtlp() says a call whose cost nobody knows: money unknown on its chat span, the count on the turn', async () => {
    const records: TransitionRecord<string>[] = [];
    const agent = new AgentWithStateMachine(
      createScriptedAgent({ replies: [{ text: 'ok', usage: { inputTokens: 10, outputTokens: 5 }, model: 'm1' }] }),
      { logger: false, sink: { write: (r) => void records.push(r) } },
    );
    await agent.runTurn('go');
    const list = spans(historyToOtlp(records));
    expect(
      attr(
        list.find((s) => s.name.startsWith('chat'))!,
        'agent_state_machine.llm.money',
      ),
    ).toBe('unknown');
    const turn = list.find((s) => s.name === 'invoke_agent')!;
    expect(attr(turn, 'agent_state_machine.usage.cost_usd')).toBe(0);
    expect(attr(turn, 'agent_state_machine.usage.unpriced_calls')).toBe(1);
  });

  it('historyToOtlp() rejects bad input, naming it', () => {
    expect(() => historyToOtlp('run.jsonl' as never)).toThrow(InvalidArgumentError);
    expect(() => historyToOtlp([], { agentName: '' })).toThrow(/options\.agentName/);
    expect(() => historyToOtlp([{ seq: 1, from: 'Ready' } as never])).toThrow(/items\[0\]\.to/);
  });
});

/** Sorted by key, with int64 as a number: proto3's JSON mapping accepts a decimal string or a number, and the SDK writes numbers. */
function sortKv<T extends { key: string; value: unknown }>(list: T[]): T[] {
  return [...list]
    .map((kv) => {
      const v = kv.value as Record<string, unknown>;
      return 'intValue' in v ? { ...kv, value: { intValue: Number(v['intValue']) } } : kv;
    })
    .sort((a, b) => a.key.localeCompare(b.key));
}
