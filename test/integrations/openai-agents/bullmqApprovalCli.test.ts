// The Agents SDK's tool approvals on the BullMQ worker, answered from the terminal: two worker
// processes with `drive` (an Agent on the SDK's own OpenAIProvider against the local Responses
// server), ten tasks, four parked at `deploy` (`needsApproval`) holding no slot and no job, two
// approved and two denied with the built `agent-sm approve|deny --redis`; each goes on as the same
// run through the SDK's resume (test/helpers/workerApprovalCli.ts).
import { responsesApprovalServer } from '../../helpers/approvalBatch';
import { workerApprovalCliTest } from '../../helpers/workerApprovalCli';

workerApprovalCliTest({
  name: 'Agents SDK interruptions on startBatchWorker({ drive }), answered with the built agent-sm --redis',
  framework: 'agents',
  server: responsesApprovalServer,
  conversation: (body) => (body as { input: unknown }).input,
});

// The batch's policy instead of the tool's own `needsApproval`: submitBatch({ approve }), stored
// with the batch, is put on the Agent's tools by the AgentsMirror on every worker.
workerApprovalCliTest({
  name: "Agents SDK tools under submitBatch's `approve` policy on startBatchWorker({ drive }), answered with the built agent-sm --redis",
  framework: 'agents',
  server: responsesApprovalServer,
  conversation: (body) => (body as { input: unknown }).input,
  policy: true,
});
