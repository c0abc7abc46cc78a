// Agents SDK tool approval (`needsApproval`) through AgentsMirror with approval states: the SDK's
// run stops on its interruptions, the mirror's run parks in AwaitingApproval (not ended), and
// the answer — given to the mirror, or on the SDK's own RunState — continues the same run through
// the SDK's resume (`state.approve` / `state.reject`, then `run(agent, state)`). The SDK's own
// OpenAIProvider against the local Responses and Chat Completions servers.
import { Agent, OpenAIProvider, setTracingDisabled, tool, type RunState } from '@openai/agents';
import { z } from 'zod';
import { InvalidArgumentError, runBatch } from 'agent-state-machine';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadHistory, validateHistory } from 'agent-state-machine/history';
import { AgentsMirror, agentsMirror } from '../../../lib/integrations/openai-agents';
import {
  startOpenAIResponsesServer,
  type OpenAIResponsesServer,
} from '../../../examples/servers/openaiResponsesServer';
import { startOpenAIChatServer, type OpenAIChatServer } from '../../../examples/servers/openaiChatServer';

setTracingDisabled(true);

type Server = OpenAIResponsesServer | OpenAIChatServer;
let server: Server | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The model calls `ls` and `deploy` (which waits for a person), then answers with what its tool results said. */
async function serve(api: 'responses' | 'chat'): Promise<Server> {
  if (api === 'responses')
    server = await startOpenAIResponsesServer({
      respond: (body: { input: Array<{ type?: string; output?: unknown }> }) => {
        const outputs = body.input.filter((i) => i.type === 'function_call_output');
        if (outputs.length === 0)
          return {
            toolCalls: [
              { callId: 'c1', name: 'ls', arguments: '{"dir":"."}' },
              { callId: 'c2', name: 'deploy', arguments: '{"target":"prod"}' },
            ],
          };
        return { text: `done: ${outputs.map((o) => JSON.stringify(o.output)).join(' | ')}` };
      },
    });
  else
    server = await startOpenAIChatServer({
      respond: (body: { messages: Array<{ role: string; content: unknown }> }) => {
        const tools = body.messages.filter((m) => m.role === 'tool');
        if (tools.length === 0)
          return {
            toolCalls: [
              { id: 'c1', name: 'ls', arguments: '{"dir":"."}' },
              { id: 'c2', name: 'deploy', arguments: '{"target":"prod"}' },
            ],
          };
        return { content: `done: ${tools.map((m) => JSON.stringify(m.content)).join(' | ')}` };
      },
    });
  return server;
}

function agentLogging(ran: string[]): Agent {
  const ls = tool({
    name: 'ls',
    description: 'Lists a folder',
    parameters: z.object({ dir: z.string() }),
    execute: async () => (ran.push('ls'), 'a b'),
  });
  const deploy = tool({
    name: 'deploy',
    description: 'Deploys',
    parameters: z.object({ target: z.string() }),
    needsApproval: true,
    execute: async ({ target }) => (ran.push(`deploy ${target}`), 'deployed'),
  });
  return new Agent({ name: 'shipper', model: 'gpt-local', tools: [ls, deploy], modelSettings: { maxTokens: 200 } });
}

function mirrorOn(
  s: Server,
  api: 'responses' | 'chat',
  options: Parameters<typeof agentsMirror>[0] = {},
): AgentsMirror {
  const modelProvider = new OpenAIProvider({
    apiKey: 'sk-local',
    baseURL: s.baseURL,
    useResponses: api === 'responses',
  });
  return agentsMirror({ modelProvider, approvals: true, logger: false, ...options });
}

/** The request bodies the server saw, none twice. */
function expectNoRequestTwice(s: Server, count: number): void {
  const bodies = s.exchanges.map((e) => JSON.stringify(e.body));
  expect(bodies).toHaveLength(count);
  expect(new Set(bodies).size).toBe(count);
  expect(s.rejected).toEqual([]);
}

const PARKED_THEN_ENDED = [
  'WaitingForUserInput',
  'SendingToLLM',
  'ProcessingLLMResponse',
  'ToolUseRequested',
  'CheckingForCancellation',
  'RunningTool',
  'AwaitingApproval',
  'RunningTool',
  'CheckingGitCommits',
  'CheckingBudget',
  'GatheringAdditionalMessages',
  'SendingToolResults',
  'ProcessingLLMResponse',
  'EndOfTurn',
];

describe('AgentsMirror: a tool that needs approval parks the run in AwaitingApproval', () => {
  it.each([
    ['responses', false],
    ['chat', false],
    ['responses', true],
    ['chat', true],
  ] as const)(
    '%s API (streamed: %s): approved through the mirror, the same run goes on and ends',
    async (api, stream) => {
      const s = await serve(api);
      const ran: string[] = [];
      const agent = agentLogging(ran);
      const am = mirrorOn(s, api);
      const run = async (input: Parameters<AgentsMirror['run']>[1]) => {
        if (!stream) return am.run(agent, input);
        const streamed = await am.run(agent, input, { stream: true });
        await streamed.completed;
        return streamed;
      };
      const first = await run('ship it');
      expect(first.interruptions.map((i) => i.name)).toEqual(['deploy']);
      expect(am.mirror.running).toBe(true);
      expect(am.machine.current as string).toBe('AwaitingApproval');
      expect(am.mirror.approvals.pending).toEqual([{ callId: 'c2', name: 'deploy', input: { target: 'prod' } }]);
      expect(ran).toEqual(['ls']);
      const answered = am.answered();
      am.mirror.approvals.approve('c2');
      const state = await answered;
      expect(state).toBe(first.state);
      const second = await run(state!);
      expect(second.finalOutput).toBe('done: "a b" | "deployed"');
      expect(ran).toEqual(['ls', 'deploy prod']);
      expect(am.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
      expect(am.mirror.turn).toBe(1);
      expect(am.usage.llmCalls).toBe(2);
      expectNoRequestTwice(s, 2);
      const history = am.machine.history();
      expect(history.map((r) => r.to)).toEqual(PARKED_THEN_ENDED);
      expect(history[6]!.data).toEqual({ calls: [{ callId: 'c2', name: 'deploy', input: { target: 'prod' } }] });
      expect(validateHistory(history, am.machine.table).issues).toEqual([]);
    },
  );

  it.each(['responses', 'chat'] as const)(
    '%s API: denied through the mirror, the model hears the denial as the SDK reports a rejection, the tool never runs',
    async (api) => {
      const s = await serve(api);
      const ran: string[] = [];
      const agent = agentLogging(ran);
      const am = mirrorOn(s, api);
      await am.run(agent, 'ship it');
      am.mirror.approvals.deny('c2', 'not on prod');
      const result = await am.run(agent, (await am.answered())!);
      expect(ran).toEqual(['ls']);
      expect(result.finalOutput).toBe('done: "a b" | "denied: not on prod"');
      expect(am.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
      const answer = am.machine.history().find((r) => (r.from as string) === 'AwaitingApproval');
      expect(answer?.data).toEqual({ answers: [{ callId: 'c2', approved: false, reason: 'not on prod' }] });
      expectNoRequestTwice(s, 2);
      expect(validateHistory(am.machine.history(), am.machine.table).issues).toEqual([]);
    },
  );

  it("answered on the SDK's own RunState (state.approve / state.reject): the mirror takes the answers, the same run goes on", async () => {
    const s = await serve('responses');
    const ran: string[] = [];
    const agent = agentLogging(ran);
    const am = mirrorOn(s, 'responses', { rejectionMessage: () => undefined });
    const first = await am.run(agent, 'ship it');
    first.state.reject(first.interruptions[0]!);
    const result = await am.run(agent, first.state);
    expect(ran).toEqual(['ls']);
    // rejectionMessage gave undefined: the SDK words the rejection.
    expect(result.finalOutput).toBe('done: "a b" | "Tool execution was not approved."');
    const answer = am.machine.history().find((r) => (r.from as string) === 'AwaitingApproval');
    expect(answer?.data).toEqual({
      answers: [{ callId: 'c2', approved: false, reason: 'rejected on the RunState' }],
    });
    expect(am.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
    expectNoRequestTwice(s, 2);
  });

  it('a parked run refuses, by name, another input and its state before every call has an answer', async () => {
    const s = await serve('responses');
    const agent = agentLogging([]);
    const am = mirrorOn(s, 'responses');
    const first = await am.run(agent, 'ship it');
    await expect(am.run(agent, 'something else')).rejects.toThrow(InvalidArgumentError);
    await expect(am.run(agent, 'something else')).rejects.toThrow(/RunState from await am\.answered\(\)/);
    await expect(am.run(agent, first.state)).rejects.toThrow(/waits for approval of deploy \(c2\)/);
    expect(am.machine.current as string).toBe('AwaitingApproval');
    expectNoRequestTwice(s, 1);
  });

  it('a cancel while it waits ends the run as cancelled; answered() then resolves undefined', async () => {
    const s = await serve('responses');
    const am = mirrorOn(s, 'responses');
    await am.run(agentLogging([]), 'ship it');
    const answered = am.answered();
    am.cancel('no one is there');
    expect(await answered).toBeUndefined();
    expect(am.result).toMatchObject({ outcome: 'cancelled' });
    expect(() => am.mirror.approvals.approve('c2')).toThrow(/went on or ended/);
    // The next input is a new run, which parks in its turn.
    await am.run(agentLogging([]), 'ship it again');
    expect(am.mirror.turn).toBe(2);
    expect(am.machine.current as string).toBe('AwaitingApproval');
  });

  it('two calls of one response wait together: one approved, one denied, each reaches the SDK as its own answer', async () => {
    server = await startOpenAIResponsesServer({
      respond: (body: { input: Array<{ type?: string; output?: unknown }> }) => {
        const outputs = body.input.filter((i) => i.type === 'function_call_output');
        if (outputs.length > 0) return { text: `done: ${outputs.map((o) => String(o.output)).join(' | ')}` };
        return {
          toolCalls: [
            { callId: 'c2', name: 'deploy', arguments: '{"target":"staging"}' },
            { callId: 'c3', name: 'deploy', arguments: '{"target":"prod"}' },
          ],
        };
      },
    });
    const ran: string[] = [];
    const am = mirrorOn(server, 'responses');
    const agent = agentLogging(ran);
    await am.run(agent, 'ship both');
    expect(am.mirror.approvals.pending).toEqual([
      { callId: 'c2', name: 'deploy', input: { target: 'staging' } },
      { callId: 'c3', name: 'deploy', input: { target: 'prod' } },
    ]);
    am.mirror.approvals.deny('c3', 'not on prod');
    expect(am.machine.current as string).toBe('AwaitingApproval');
    am.mirror.approvals.approve('c2');
    const result = await am.run(agent, (await am.answered())!);
    expect(ran).toEqual(['deploy staging']);
    expect(result.finalOutput).toBe('done: deployed | denied: not on prod');
    expect(am.result).toMatchObject({ outcome: 'end_of_turn', turn: 1 });
    expectNoRequestTwice(server, 2);
  });

  it('without approval states the run ends as cancelled, saying how to park it', async () => {
    const s = await serve('responses');
    const am = mirrorOn(s, 'responses', { approvals: false });
    await am.run(agentLogging([]), 'ship it');
    expect(am.result).toMatchObject({ outcome: 'cancelled' });
    expect(String(am.result?.error?.message ?? am.machine.history().at(-1)?.description)).toMatch(
      /paused for approval of deploy.*approvals: true/,
    );
    expect(await am.answered()).toBeUndefined();
  });
});

describe('AgentsMirror approvals in runBatch, answered by onApproval', () => {
  it('ten tasks, four park at deploy without a slot; two approved and two denied go on as the same runs: no request twice, each task reported once', async () => {
    const deploying = ['t1', 't3', 't5', 't7'];
    server = await startOpenAIResponsesServer({
      respond: (body: { input: Array<{ type?: string; role?: string; content?: unknown; output?: unknown }> }) => {
        const id = /task (t\d+)/.exec(JSON.stringify(body.input.find((i) => i.role === 'user')?.content))?.[1] ?? '?';
        const outputs = body.input.filter((i) => i.type === 'function_call_output');
        if (outputs.length > 0) return { text: `${id} done: ${outputs.map((o) => String(o.output)).join(' | ')}` };
        return {
          toolCalls: [
            { callId: 'c1', name: 'ls', arguments: '{"dir":"."}' },
            ...(deploying.includes(id) ? [{ callId: 'c2', name: 'deploy', arguments: `{"target":"prod-${id}"}` }] : []),
          ],
        };
      },
    });
    const s = server;
    const modelProvider = new OpenAIProvider({ apiKey: 'sk-local', baseURL: s.baseURL, useResponses: true });
    const ran: string[] = [];
    const asked: string[] = [];
    let most = 0;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asm-agents-approve-'));
    try {
      const report = await runBatch(
        Array.from({ length: 10 }, (_, i) => `t${i}`).map((id) => ({
          id,
          input: `task ${id}`,
          drive: async (mirror) => {
            const agent = agentLogging(ran);
            const am = new AgentsMirror({ mirror, modelProvider });
            // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the state of any agent
            let input: string | RunState<any, any> = `task ${id}`;
            for (;;) {
              await am.run(agent, input);
              const next = await am.answered();
              if (next === undefined) return;
              input = next;
            }
          },
        })),
        {
          concurrency: 2,
          historyDir: dir,
          logger: false,
          onProgress: (p) => void (most = Math.max(most, p.running)),
          onApproval: (request) => {
            asked.push(
              `${request.id} ${request.calls.map((c) => `${c.callId} ${c.name} ${JSON.stringify(c.input)}`).join()}`,
            );
            // Answered later, from outside the run: the parked runs let go of their slots meanwhile.
            setTimeout(() => {
              if (request.id === 't1' || request.id === 't5') request.approve('c2');
              else request.deny('c2', 'not today');
            }, 50);
          },
        },
      );
      expect(asked.sort()).toEqual(deploying.map((id) => `${id} c2 deploy {"target":"prod-${id}"}`));
      expect(report.runs.map((r) => [r.id, r.outcome, r.usage.llmCalls])).toEqual(
        Array.from({ length: 10 }, (_, i) => [`t${i}`, 'end_of_turn', 2]),
      );
      expect(report.runs.filter((r) => r.approval !== undefined).map((r) => [r.id, r.approval!.waits])).toEqual(
        deploying.map((id) => [id, 1]),
      );
      expect(ran.filter((r) => r.startsWith('deploy')).sort()).toEqual(['deploy prod-t1', 'deploy prod-t5']);
      expect(ran.filter((r) => r === 'ls')).toHaveLength(10);
      expectNoRequestTwice(s, 20);
      for (const id of ['t3', 't7']) {
        const last = s.exchanges.filter((e) => JSON.stringify(e.body).includes(`task ${id}`)).at(-1)!;
        expect(JSON.stringify(last.body.input)).toContain('denied: not today');
      }
      for (const run of report.runs) {
        const { entries } = await loadHistory(run.historyFile!);
        expect(validateHistory(entries)).toMatchObject({ ok: true, issues: [] });
      }
      expect(most).toBeLessThanOrEqual(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
