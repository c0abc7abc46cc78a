// The AI SDK's tool approval and LangGraph's interrupt() across a worker SIGKILLed while runs are
// parked, on BullMQ (test/helpers/workerApprovalKill.ts): the lost runs are taken over from their
// journal in PostgreSQL, answers given before the takeover are taken, the others wait again on
// the same call, nothing is asked, sent or run twice. The Agents SDK's (Node 22+):
// test/integrations/openai-agents/bullmqApprovalKill.test.ts.
import { chatApprovalServer } from '../../helpers/approvalBatch';
import { workerApprovalKillTest } from '../../helpers/workerApprovalKill';

workerApprovalKillTest({
  name: 'AI SDK needsApproval',
  framework: 'ai-sdk',
  server: () => chatApprovalServer((content) => JSON.stringify(content)),
});

workerApprovalKillTest({
  name: 'LangGraph interrupt()',
  framework: 'langgraph',
  server: () => chatApprovalServer(String),
});

// The batch's policy on a tool that asks nothing itself: the LangGraphMirror's wrapTools()
// interrupts before it runs, on the worker that took the run over as on the first.
workerApprovalKillTest({
  name: "LangGraph tools under submitBatch's `approve` policy",
  framework: 'langgraph',
  server: () => chatApprovalServer(String),
  policy: true,
});
