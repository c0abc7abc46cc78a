import { readHistoryChunks, type ReadHistoryOptions } from '../history/loadHistory';
import { MoveComparison } from './MoveComparison';
import { noLLMCall } from './replayLoop';
import { ReplayFeed } from './ReplayFeed';
import {
  assertReplayOptions,
  move,
  replayFromFeed,
  type ReplayedMove,
  type ReplayReport,
  type ReplayRunOptions,
} from './replayRun';

/**
 * `replayRun` on a history file (or a store's run, its lines as `input`), read as the replay goes rather than loaded first: the journal
 * lines are taken as the replay asks for them and let go, and the moves compared as both sides
 * come in, so the peak memory does not grow with the file. Needs a file written with
 * `journal: true`.
 */
export async function replayFile(
  path: string,
  readOptions: Omit<ReadHistoryOptions, 'pace'>,
  options: ReplayRunOptions = {},
): Promise<ReplayReport> {
  const moves = new MoveComparison<ReplayedMove>();
  const feed = ReplayFeed.ofChunks(readHistoryChunks(path, readOptions), (r) => moves.addRecorded(move(r)));
  try {
    // The first move's time starts the replay's clock; the first LLM line says there is a journal.
    if (!(await feed.readUntil(() => feed.llmLines > 0))) throw noLLMCall(feed.beforeFirstLLM);
    await feed.readUntil(() => feed.firstAt !== undefined);
    assertReplayOptions(options);
    return await replayFromFeed(feed, moves, options);
  } finally {
    await feed.close();
  }
}
