// AI SDK tool approval and LangGraph's interrupt() on the BullMQ worker, answered from the
// terminal: two worker processes with `drive`, ten tasks, four parked at `deploy` holding no slot
// and no job, two approved and two denied with the built `agent-sm approve|deny --redis`; each
// goes on as the same run through its framework's own resume (test/helpers/workerApprovalCli.ts;
// the Agents SDK's, which needs Node 22, is test/integrations/openai-agents/bullmqApprovalCli.test.ts).
import { chatApprovalServer } from '../../helpers/approvalBatch';
import { workerApprovalCliTest } from '../../helpers/workerApprovalCli';

workerApprovalCliTest({
  name: 'AI SDK needsApproval on startBatchWorker({ drive }), answered with the built agent-sm --redis',
  framework: 'ai-sdk',
  server: () => chatApprovalServer((content) => JSON.stringify(content)),
  conversation: (body) => (body as { messages: unknown }).messages,
});

workerApprovalCliTest({
  name: 'LangGraph interrupt() on startBatchWorker({ drive }), answered with the built agent-sm --redis',
  framework: 'langgraph',
  server: () => chatApprovalServer(String),
  conversation: (body) => (body as { messages: unknown }).messages,
});

// The batch's policy instead of the tools' own: submitBatch({ approve: { deploy: true } }),
// stored with the batch, is put on each framework's tools by its integration on every worker.
workerApprovalCliTest({
  name: "AI SDK tools under submitBatch's `approve` policy on startBatchWorker({ drive }), answered with the built agent-sm --redis",
  framework: 'ai-sdk',
  server: () => chatApprovalServer((content) => JSON.stringify(content)),
  conversation: (body) => (body as { messages: unknown }).messages,
  policy: true,
});

workerApprovalCliTest({
  name: "LangGraph tools under submitBatch's `approve` policy on startBatchWorker({ drive }), answered with the built agent-sm --redis",
  framework: 'langgraph',
  server: () => chatApprovalServer(String),
  conversation: (body) => (body as { messages: unknown }).messages,
  policy: true,
});

workerApprovalCliTest({
  name: "your own loop's tools (observeTask) under submitBatch's `approve` policy on startBatchWorker({ drive }), answered with the built agent-sm --redis",
  framework: 'observe',
  server: () => chatApprovalServer(String),
  conversation: (body) => (body as { messages: unknown }).messages,
  policy: true,
});
