// Your own loop's approvals in a folder batch, answered from the terminal: ten observed tasks in
// another process (test/fixtures/batch/observeApprovalBatch.ts: the real `openai` client through
// `meteredFetch`, tools through `observeTool`, under the batch's `approve: { deploy: true }`),
// four of which call `deploy`; each parks in AwaitingApproval without holding a slot, `agent-sm
// approvals` lists it, two are approved and two denied with the built CLI, and each goes on as
// the same run. Then the same with a SIGKILL while parked, the answers given while no batch runs,
// and a resume: no request reaches the server twice, every task is reported once.
import { approvalBatchTests, chatApprovalServer } from '../helpers/approvalBatch';

approvalBatchTests({
  name: "an observed loop's tools under the batch's `approve` policy in a folder batch, answered from the built CLI",
  fixture: 'observeApprovalBatch',
  server: () => chatApprovalServer(String),
  conversation: (body) => (body as { messages: unknown }).messages,
  unansweredKill: true,
});
