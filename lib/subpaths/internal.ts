/**
 * Helpers that the integrations (`agent-state-machine/bullmq`, `/ai-sdk`, …) share with the
 * library, imported by its name so that every bundle uses one copy of them.
 *
 * **Not documented and not covered by semver**: anything here may change or go in any
 * release. Use the main entry and the documented subpaths instead.
 *
 * @module agent-state-machine/internal
 */
export { assertKnownOptions } from '../machine/assertKnownOptions';
export { checkTaskList } from '../machine/checkTaskList';
export { assertApprovalPolicy } from '../agent/ApprovalGate';
export { runTask } from '../batch/tasks/runTask';
export type { RunTaskOptions, TaskRun } from '../batch/tasks/runTask';
export type { ParkableRun } from '../batch/tasks/ParkableRun';
export type { FrameworkTurn } from '../batch/tasks/FrameworkTurn';
export { safeFileName } from '../batch/keeping/safeFileName';
export { lockFolder, LOCK_FILE } from '../batch/keeping/lockFolder';
export { batchHeldMessage } from '../batch/keeping/batchHeldMessage';
export type { FolderLock } from '../batch/keeping/lockFolder';
export { UsageMeter } from '../agent/money/UsageMeter';
export type { UsageMeterOptions } from '../agent/money/UsageMeter';
export { emptyUsage, addUsage } from '../agent/UsageTotals';
export { assertBudgetLimits } from '../agent/BudgetLimits';
export { assertBoundsCalls } from '../agent/options/assertBoundsCalls';
export { assertPricing } from '../agent/options/assertPricing';
export { priceUsage } from '../agent/money/priceResponse';
export { storeRunState, storeRunJournal } from '../batch/resume/EarlierRuns';
export { resumedUsage } from '../batch/keeping/readResumeJournal';
export { resolveResumeTools } from '../agent/journal/ResumeToolPolicy';
export { finishedRunReport } from '../batch/finishedRunReport';
export { spendOfRun } from '../history/spendOfRun';
export { attemptSpends } from '../history/attemptSpends';
export { reasonsOverAttempts } from '../history/spendOverAttempts';
export { IN_FLIGHT } from '../history/ReasonTally';
export type { TaskState } from '../batch/resume/resumeState';
export { MissingPeerError } from '../machine/MissingPeerError';
export type { PeerRange } from '../machine/MissingPeerError';
export { peerLoadError } from '../machine/peerLoadError';
