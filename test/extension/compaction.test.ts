import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import type { AgentLoop, CompactInfo, LLMResponse } from '../../lib/agent/AgentLoop';
import { COMPACTION_EXTENSION } from '../../lib/agent/extensionStates';
import { isContextOverflow } from '../../lib/agent/retry/isContextOverflow';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { extendTable } from '../../lib/machine/extendTable';
import { InvalidTableError } from '../../lib/machine/InvalidTableError';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

const TABLE = extendTable(DEFAULT_TABLE, COMPACTION_EXTENSION);

/** OpenAI's body for a request over the context, as the `openai` SDK's BadRequestError carries it. */
function openAIOverflow(): Error {
  return Object.assign(new Error("400 This model's maximum context length is 100 tokens."), {
    status: 400,
    code: 'context_length_exceeded',
    type: 'invalid_request_error',
  });
}

/**
 * A loop whose "model" takes at most `limit` characters of conversation and says so as OpenAI
 * does; `compact` drops the oldest turns (user message and what followed it) but the last.
 */
function smallContextLoop(limit: number, compaction: 'drop' | 'summarise' | 'throw' = 'drop') {
  const turns: string[][] = [];
  const sent: string[] = [];
  const compactions: CompactInfo[] = [];
  const size = (extra: string): number => turns.flat().join('').length + extra.length;
  const loop: AgentLoop = {
    async sendUserMessage(message): Promise<LLMResponse> {
      if (size(message) > limit) throw openAIOverflow();
      sent.push(message);
      turns.push([message, `reply to ${message}`]);
      return { text: `reply to ${message}`, usage: { inputTokens: 10, outputTokens: 2, costUsd: 0.01 } };
    },
    async sendToolResults(): Promise<LLMResponse> {
      return { text: 'n/a' };
    },
    async runTool(call) {
      return { callId: call.id, output: '' };
    },
    async compact(info) {
      compactions.push(info);
      if (compaction === 'throw') throw new Error('summariser down');
      const removed = turns.splice(0, Math.max(0, turns.length - 1)).flat().length;
      if (compaction === 'summarise') {
        turns.unshift(['(summary)']);
        return {
          usage: { inputTokens: 50, outputTokens: 5, costUsd: 0.2 },
          model: 'summariser',
          removedMessages: removed,
        };
      }
      return { removedMessages: removed };
    },
  };
  return { loop, sent, compactions, turns };
}

function run(loop: AgentLoop, extra: Record<string, unknown> = {}) {
  const records: TransitionRecord<string>[] = [];
  const agent = new AgentWithStateMachine(loop, {
    table: TABLE,
    compact: true,
    logger: false,
    sink: { write: (r) => void records.push(r) },
    ...extra,
  });
  return { agent, records };
}

describe('compaction (Compacting)', () => {
  it('an overflow moves to Compacting, the loop compacts, and the same call is made again and succeeds', async () => {
    const { loop, sent, compactions } = smallContextLoop(60);
    const { agent, records } = run(loop);
    for (const input of ['first message', 'second message', 'third message']) {
      expect((await agent.runTurn(input)).outcome).toBe('end_of_turn');
    }
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({ operation: 'sendUserMessage', turn: 3 });
    expect(sent).toEqual(['first message', 'second message', 'third message']);
    const third = records.slice(records.findIndex((r) => r.data && (r.data as { turn?: number }).turn === 3));
    expect(third.map((r) => r.to)).toEqual([
      'WaitingForUserInput',
      'SendingToLLM',
      'Compacting',
      'SendingToLLM',
      'ProcessingLLMResponse',
      'EndOfTurn',
    ]);
    expect(records.every((r) => !r.forced)).toBe(true);
    // Not retried as a transient failure: one attempt, then compaction.
    expect(third[2]!.data).toMatchObject({ failures: [{ attempt: 1 }] });
  });

  it('a summarising compaction is charged like any LLM call: one call, its tokens, its cost', async () => {
    const { loop } = smallContextLoop(60, 'summarise');
    const { agent } = run(loop);
    await agent.runTurn('first message');
    await agent.runTurn('second message');
    const before = agent.usage;
    const result = await agent.runTurn('third message');
    expect(result.outcome).toBe('end_of_turn');
    // The failed attempt, the summary, the retry.
    expect(agent.usage.llmCalls - before.llmCalls).toBe(3);
    expect(agent.usage.costUsd - before.costUsd).toBeCloseTo(0.21, 10);
    expect(agent.usage.inputTokens - before.inputTokens).toBe(60);
  });

  it('a compaction that fails ends the turn in Error from Compacting (a legal move); a second overflow is not compacted again', async () => {
    const failing = smallContextLoop(30, 'throw');
    const a = run(failing.loop);
    await a.agent.runTurn('first message');
    const r = await a.agent.runTurn('second message');
    expect(r.outcome).toBe('error');
    expect(a.records.at(-1)).toMatchObject({ from: 'Compacting', to: 'Error', forced: false });
    // Too long even when compacted: one compaction, then the call's failure ends the turn.
    const hopeless = smallContextLoop(5);
    const b = run(hopeless.loop);
    const result = await b.agent.runTurn('a message far longer than five');
    expect(result.outcome).toBe('error');
    expect(hopeless.compactions).toHaveLength(1);
    expect(b.records.at(-1)).toMatchObject({ from: 'SendingToLLM', to: 'Error' });
  });

  it('without the option an overflow ends the turn in Error, as before', async () => {
    const { loop, compactions } = smallContextLoop(20);
    const agent = new AgentWithStateMachine(loop, { logger: false });
    expect((await agent.runTurn('a message longer than twenty')).outcome).toBe('error');
    expect(compactions).toEqual([]);
  });

  it('the option needs the loop’s compact and, in a given table, the Compacting edges, named when missing', () => {
    const { loop } = smallContextLoop(20);
    // No table: the option brings COMPACTION_EXTENSION.
    expect(new AgentWithStateMachine(loop, { compact: true, logger: false }).machine.table.states).toHaveProperty(
      'Compacting',
    );
    const plain = () => new AgentWithStateMachine(loop, { table: DEFAULT_TABLE, compact: true, logger: false });
    expect(plain).toThrow(InvalidTableError);
    expect(plain).toThrow(
      /^`compact` needs the states and edges of COMPACTION_EXTENSION, which `table` lacks \(SendingToLLM → Compacting,.*\): pass table: extendTable\(yourTable, COMPACTION_EXTENSION\)/,
    );
    const { compact: _, ...without } = loop;
    expect(() => new AgentWithStateMachine(without, { table: TABLE, compact: true, logger: false })).toThrow(
      InvalidArgumentError,
    );
  });

  it('isContextOverflow() knows OpenAI’s, Anthropic’s and the AI SDK’s ways of saying it, and nothing else', () => {
    expect(isContextOverflow(openAIOverflow())).toBe(true);
    // The openai SDK keeps the body's error object on `error`.
    expect(isContextOverflow({ status: 400, error: { code: 'context_length_exceeded' } })).toBe(true);
    // @anthropic-ai/sdk: BadRequestError, message "400 {json}", body on `error`.
    const anthropic = Object.assign(
      new Error(
        '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}',
      ),
      {
        status: 400,
        error: {
          type: 'error',
          error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' },
        },
      },
    );
    expect(isContextOverflow(anthropic)).toBe(true);
    // The AI SDK: APICallError with the provider's body, possibly inside a RetryError.
    const apiCall = Object.assign(new Error('Bad Request'), {
      name: 'AI_APICallError',
      statusCode: 400,
      responseBody: '{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}',
    });
    expect(isContextOverflow(apiCall)).toBe(true);
    expect(
      isContextOverflow(
        Object.assign(new Error('Failed after 3 attempts'), { name: 'AI_RetryError', lastError: apiCall }),
      ),
    ).toBe(true);
    expect(isContextOverflow(Object.assign(new Error('Rate limited'), { status: 429 }))).toBe(false);
    expect(isContextOverflow(Object.assign(new Error('prompt is too long'), { status: 500 }))).toBe(false);
    expect(isContextOverflow(undefined)).toBe(false);
  });
});
