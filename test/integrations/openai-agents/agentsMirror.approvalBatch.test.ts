// The Agents SDK's tool approvals in a folder batch, answered from the terminal: ten Agents SDK
// tasks in another process (test/fixtures/batch/agentsApprovalBatch.ts, an Agent on the SDK's
// own OpenAIProvider against the local Responses server), four of which call `deploy`
// (`needsApproval`), whose interruption parks the run in AwaitingApproval without holding a slot;
// `agent-sm approvals` lists it, two are approved and two denied with the built CLI, and each
// goes on as the same run through the SDK's resume (`state.approve` / `reject`, `run(agent, state)`).
// Then the same with a SIGKILL while parked, the answers given while no batch runs, and a resume:
// no request reaches the server twice, every task is reported once.
import { approvalBatchTests, responsesApprovalServer } from '../../helpers/approvalBatch';

approvalBatchTests({
  name: 'Agents SDK interruptions in a folder batch, answered from the built CLI',
  fixture: 'agentsApprovalBatch',
  server: responsesApprovalServer,
  conversation: (body) => (body as { input: unknown }).input,
});

// The batch's `approve: { deploy: true }` on a `deploy` with no `needsApproval` of its own: the
// mirror puts the policy on the tool, and the SDK interrupts the run for it as above.
approvalBatchTests({
  name: "Agents SDK tools under the batch's `approve` policy in a folder batch, answered from the built CLI",
  fixture: 'agentsApprovalBatch',
  args: ['--policy'],
  server: responsesApprovalServer,
  conversation: (body) => (body as { input: unknown }).input,
});
