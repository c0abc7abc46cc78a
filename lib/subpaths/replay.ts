/**
 * A recorded run driven again: replayed from its journal without a request (`replayRun`,
 * `replayLoop`), an agent resumed where its file was cut off (`resumeAgent`), a run parked for
 * approval picked up (`resumeAwaitingApproval`), and HTTP recorded and served back
 * (`recordFetch`, `replayFetch`).
 *
 * @module agent-state-machine/replay
 */
export { replayLoop } from '../replay/replayLoop';
export type { ReplayedLoop } from '../replay/replayLoop';
export { replayRun } from '../replay/replayRun';
export type { ReplayReport, ReplayRunOptions, ReplayedMove } from '../replay/replayRun';
export { ReplayDivergedError } from '../replay/ReplayDivergedError';
export { resumeAgent } from '../replay/resumeAgent';
export type { ResumeAgentOptions, ResumedAgent } from '../replay/resumeAgent';
export { recordFetch } from '../replay/recordFetch';
export type { RecordFetchOptions, RecordingFetch, FetchFunction, HttpExchange } from '../replay/recordFetch';
export { replayFetch } from '../replay/replayFetch';
export type { ReplayingFetch } from '../replay/replayFetch';
export { resumeAwaitingApproval } from '../replay/resumeAwaitingApproval';
export type { ResumedApproval } from '../replay/resumeAwaitingApproval';
