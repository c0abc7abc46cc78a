// AI SDK tool approval in a folder batch, answered from the terminal: ten AI SDK tasks in another
// process (test/fixtures/batch/aiSdkApprovalBatch.ts, the real @ai-sdk/openai client against the
// local server), four of which call `deploy` (`needsApproval`); each parks in AwaitingApproval
// without holding a slot, `agent-sm approvals` lists it, two are approved and two denied with the
// built CLI, and each goes on as the same run. Then the same with a SIGKILL while parked, the
// answers given while no batch runs, and a resume: no request reaches the server twice, every
// task is reported once.
import * as ai from 'ai';
import { approvalBatchTests, chatApprovalServer } from '../../helpers/approvalBatch';

/** ai 7 has `isStepCount`: the child is bundled against the major this process runs. */
const ALIAS: Record<string, string> = 'isStepCount' in ai ? { ai: 'ai-7', '@ai-sdk/openai': '@ai-sdk/openai-4' } : {};

for (const variant of ['generate', 'stream'])
  approvalBatchTests({
    name: `AI SDK approvals in a folder batch (${variant}), answered from the built CLI`,
    fixture: 'aiSdkApprovalBatch',
    args: [variant],
    alias: ALIAS,
    server: () => chatApprovalServer((content) => JSON.stringify(content)),
    conversation: (body) => (body as { messages: unknown }).messages,
  });

// The batch's `approve: { deploy: true }` on a `deploy` with no `needsApproval` of its own:
// mirrorAISDK puts the policy on the tool, and the run parks and goes on as above.
approvalBatchTests({
  name: "AI SDK tools under the batch's `approve` policy in a folder batch, answered from the built CLI",
  fixture: 'aiSdkApprovalBatch',
  args: ['generate', '--policy'],
  alias: ALIAS,
  server: () => chatApprovalServer((content) => JSON.stringify(content)),
  conversation: (body) => (body as { messages: unknown }).messages,
});
