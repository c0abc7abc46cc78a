// The scripted work the durable and store suites time: the text and usage of every reply, and
// the long task that both continue lines (folder and PostgresStore) cut off and continue.
import type { BatchTask, ScriptedReply } from '../lib/index';
import type { Library } from './library';

/** Tool rounds of the long task: what a continue serves from the journal. */
export const CONTINUE_CALLS = 50;
/** Each reply's text and each tool's output: 1 KiB. */
export const TEXT = 'x'.repeat(1024);
export const USAGE = { inputTokens: 1200, outputTokens: 300, costUsd: 0.001 };
/** A scripted agent's sleep that does not wait. */
export const instant = async (): Promise<void> => undefined;

/**
 * One task of `CONTINUE_CALLS` tool rounds, then an answer, its agents made by `lib`: the bundled
 * library in the folder suite's callgrind child, the sources elsewhere.
 */
export function longTask(lib: Pick<Library, 'createScriptedAgent'>): BatchTask[] {
  const replies: ScriptedReply[] = Array.from({ length: CONTINUE_CALLS }, (_, i) => ({
    toolCalls: [{ id: `c${i}`, name: 'read', input: { path: `f${i}` } }],
    usage: USAGE,
  }));
  replies.push({ text: TEXT, usage: USAGE });
  return [
    {
      id: 'long',
      input: 'go',
      agent: () => lib.createScriptedAgent({ replies, tools: { read: { output: TEXT } }, sleep: instant }),
    },
  ];
}
