// LangGraph's interrupt() in a folder batch, answered from the terminal: ten LangGraph tasks in
// another process (test/fixtures/batch/langGraphApprovalBatch.ts, a ReAct agent on the real
// ChatOpenAI against the local server), four of which call `deploy`, whose interrupt() parks the
// run in AwaitingApproval without holding a slot; `agent-sm approvals` lists it, two are approved
// and two denied with the built CLI, and each goes on as the same run through Command({ resume }).
// Then the same with a SIGKILL while parked, the answers given while no batch runs, and a resume:
// no request reaches the server twice, every task is reported once. And a SIGKILL while parked,
// unanswered, resumed with no resumeTools (twice): the runs park again with the same calls (deploy's
// question is journaled as asked), and the answers then go on as in the running batch.
import { approvalBatchTests, chatApprovalServer } from '../../helpers/approvalBatch';

approvalBatchTests({
  name: 'LangGraph interrupt() approvals in a folder batch, answered from the built CLI',
  fixture: 'langGraphApprovalBatch',
  server: () => chatApprovalServer(String),
  conversation: (body) => (body as { messages: unknown }).messages,
  unansweredKill: true,
  asksInTool: true,
});

// The batch's `approve: { deploy: true }` on a `deploy` with no interrupt() of its own: the
// mirror's wrapTools() interrupts before the tool runs, and the run parks and goes on as above.
approvalBatchTests({
  name: "LangGraph tools under the batch's `approve` policy in a folder batch, answered from the built CLI",
  fixture: 'langGraphApprovalBatch',
  args: ['--policy'],
  server: () => chatApprovalServer(String),
  conversation: (body) => (body as { messages: unknown }).messages,
  unansweredKill: true,
  asksInTool: true,
});
