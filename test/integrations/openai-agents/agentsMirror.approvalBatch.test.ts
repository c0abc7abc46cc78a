// The Agents SDK's tool approvals in a folder batch, answered from the terminal: ten Agents SDK
// tasks in another process (test/fixtures/batch/agentsApprovalBatch.ts, an Agent on the SDK's
// own OpenAIProvider against the local Responses server), four of which call `deploy`
// (`needsApproval`), whose interruption parks the run in AwaitingApproval without holding a slot;
// `agent-sm approvals` lists it, two are approved and two denied with the built CLI, and each
// goes on as the same run through the SDK's resume (`state.approve` / `reject`, `run(agent, state)`).
// Then the same with a SIGKILL while parked, the answers given while no batch runs, and a resume:
// no request reaches the server twice, every task is reported once.
import { startOpenAIResponsesServer } from '../../../examples/servers/openaiResponsesServer';
import { approvalBatchTests, DEPLOYING } from '../../helpers/approvalBatch';

type Item = { type?: string; role?: string; content?: unknown; output?: unknown };

approvalBatchTests({
  name: 'Agents SDK interruptions in a folder batch, answered from the built CLI',
  fixture: 'agentsApprovalBatch',
  server: () =>
    startOpenAIResponsesServer({
      respond: (body: { input: string | Item[] }) => {
        const items: Item[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
        const user = items.find((i) => i.role === 'user');
        const text = typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content);
        const id = /task (t\d+)/.exec(text)?.[1] ?? '?';
        const outputs = items.filter((i) => i.type === 'function_call_output');
        if (outputs.length > 0) return { text: `${id} done: ${outputs.map((o) => String(o.output)).join(' | ')}` };
        return {
          toolCalls: [
            { callId: 'c1', name: 'ls', arguments: '{"dir":"."}' },
            ...(DEPLOYING.includes(id) ? [{ callId: 'c2', name: 'deploy', arguments: `{"target":"prod-${id}"}` }] : []),
          ],
        };
      },
    }),
  conversation: (body) => (body as { input: unknown }).input,
});
