// The Agents SDK's tool approvals across a worker SIGKILLed while runs are parked, on BullMQ
// (test/helpers/workerApprovalKill.ts): the lost runs are taken over from their journal in
// PostgreSQL, answers given before the takeover are taken, the others wait again on the same
// call, nothing is asked, sent or run twice.
import { responsesApprovalServer } from '../../helpers/approvalBatch';
import { workerApprovalKillTest } from '../../helpers/workerApprovalKill';

workerApprovalKillTest({
  name: 'Agents SDK needsApproval',
  framework: 'agents',
  server: responsesApprovalServer,
});
