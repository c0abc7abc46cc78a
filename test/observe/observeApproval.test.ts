// Your own loop under an `approve` policy: observeTool parks the run in AwaitingApproval before a
// call the policy names runs, on the real `openai` client through `meteredFetch` against the
// local Chat Completions server — answered on the mirror (observeLoop) or by the batch's
// `onApproval` (observeTask in runBatch); a denied call is not run, and the model is told so.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { observeLoop, observeTask, observeTool, runBatch, StepMirror } from 'agent-state-machine';
import { meteredFetch } from '../../lib/integrations/openai';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../examples/servers/openaiChatServer';
import { localPricing } from '../helpers/localPricing';

type Message = OpenAI.Chat.ChatCompletionMessageParam;
const TOOLS: OpenAI.Chat.ChatCompletionTool[] = ['deploy', 'ls'].map((name) => ({
  type: 'function',
  function: { name, parameters: { type: 'object', properties: { target: { type: 'string' } } } },
}));

let ran: string[];
/** The user's loop: the tool calls of a response run at once (Promise.all), each through observeTool. */
async function agent(client: OpenAI, task: string): Promise<string> {
  const messages: Message[] = [{ role: 'user', content: task }];
  for (;;) {
    const completion = await client.chat.completions.create({
      model: 'gpt-local',
      messages,
      tools: TOOLS,
      max_completion_tokens: 50,
    });
    const message = completion.choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? '';
    const outputs = await Promise.all(
      message.tool_calls.map((call) =>
        call.type !== 'function'
          ? 'not a function'
          : observeTool({ id: call.id, name: call.function.name, input: call.function.arguments }, async () => {
              ran.push(call.id);
              return `${call.function.name} done`;
            }),
      ),
    );
    message.tool_calls.forEach((call, i) =>
      messages.push({ role: 'tool', tool_call_id: call.id, content: outputs[i]! }),
    );
  }
}

let server: OpenAIChatServer;
beforeEach(async () => {
  ran = [];
  server = await startOpenAIChatServer({
    respond(body: { messages: Array<{ role: string; content: unknown }> }) {
      const results = body.messages.filter((m) => m.role === 'tool');
      if (results.length > 0) return { content: `heard: ${results.map((m) => String(m.content)).join(' | ')}` };
      return {
        toolCalls: [
          { id: 'c1', name: 'ls', arguments: '{}' },
          { id: 'c2', name: 'deploy', arguments: '{"target":"prod"}' },
          { id: 'c3', name: 'deploy', arguments: '{"target":"staging"}' },
        ],
      };
    },
  });
});
afterEach(() => server.close());

const client = (): OpenAI => new OpenAI({ baseURL: server.baseURL, apiKey: 'sk-local', fetch: meteredFetch });

it('observeLoop: each named call waits for its answer, one wait at a time; approved runs, denied is told to the model', async () => {
  const mirror = new StepMirror({ approve: { deploy: true }, pricing: localPricing, logger: false });
  const asked: string[][] = [];
  mirror.approvals.listen(({ pendingApprovals = [] }) => {
    asked.push(pendingApprovals.map((p) => p.callId));
    // Answered later, as a person would: c2 approved, c3 denied.
    setTimeout(() => {
      for (const p of pendingApprovals)
        if (p.callId === 'c2') mirror.approvals.approve(p.callId, { by: 'ops' });
        else mirror.approvals.deny(p.callId, 'not today');
    }, 5);
  });
  const { result, value } = await observeLoop(mirror, 'ship it', () => agent(client(), 'ship it'));
  expect(result.outcome).toBe('end_of_turn');
  expect(asked).toEqual([['c2'], ['c3']]);
  expect(ran.sort()).toEqual(['c1', 'c2']);
  expect(value).toBe('heard: ls done | deploy done | denied: not today');
  const moves: string[] = mirror.machine.history().map((t) => t.to);
  expect(moves.filter((s) => s === 'AwaitingApproval')).toHaveLength(2);
  expect(server.exchanges).toHaveLength(2);
});

it('observeTask in runBatch: the run parks without its slot, onApproval answers, the same run goes on', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-observe-approve-'));
  try {
    const report = await runBatch([observeTask('t1', 'ship it', (input) => agent(client(), input))], {
      approve: { deploy: true },
      pricing: localPricing,
      historyDir: dir,
      journal: true,
      logger: false,
      onApproval: ({ calls, approve, deny }) => {
        for (const c of calls)
          if (c.input === '{"target":"prod"}') approve(c.callId);
          else deny(c.callId, 'staging is frozen');
      },
    });
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([['t1', 'end_of_turn']]);
    expect(report.runs[0]!.approval).toMatchObject({ waits: 2, calls: 2 });
    expect(ran.sort()).toEqual(['c1', 'c2']);
    const file = fs.readFileSync(path.join(dir, 't1.jsonl'), 'utf8');
    expect(file).toContain('"to":"AwaitingApproval"');
    expect(file).toContain('denied: staging is frozen');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

it('a named call the policy function refuses to judge (it throws) waits too: fail closed', async () => {
  const mirror = new StepMirror({
    approve: (call) => {
      if (call.name === 'deploy') throw new Error('no policy for deploys');
      return false;
    },
    pricing: localPricing,
    logger: false,
  });
  mirror.approvals.listen(({ pendingApprovals = [] }) => {
    for (const p of pendingApprovals) mirror.approvals.deny(p.callId, 'nobody decided');
  });
  const { result } = await observeLoop(mirror, 'ship it', () => agent(client(), 'ship it'));
  expect(result.outcome).toBe('end_of_turn');
  expect(ran).toEqual(['c1']);
});
