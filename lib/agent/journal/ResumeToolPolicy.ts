import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { ToolCall } from '../AgentLoop';

/** What a resumed run does with a tool call the interrupted run had made: serve its journaled result, or run it again. */
export type ResumeToolChoice = 'serve' | 'rerun';

/**
 * Per tool, what a resumed run does with the calls the interrupted run had made (the option
 * `resumeTools`, on every path that resumes): `'serve'` answers with the journaled result
 * without running the tool (the default: a tool with side effects must not run twice);
 * `'rerun'` runs it again (for tools that only read). A call that had started but has no
 * journaled result is run again only under `'rerun'`; under `'serve'` it is answered as
 * interrupted, and the LLM decides. Either `{ default?, rerun?, serve? }` with tool names, or a
 * function of the call.
 */
export type ResumeToolPolicy =
  | { default?: ResumeToolChoice; rerun?: readonly string[]; serve?: readonly string[] }
  | ((call: ToolCall) => ResumeToolChoice);

const CHOICES = "'serve' or 'rerun'";
// The words of earlier versions, refused with the one to use: the tool policy was the only `replay` that was not the subpath or the command.
const RENAMED = "'serve' or 'rerun' ('replay' is now 'serve')";

// The option's name, in every message.
const OPTION = 'resumeTools';
/** No policy given: every recorded result served. One function for all, as every adapter and mirror resolves one. */
const SERVE_ALL = (): ResumeToolChoice => 'serve';

/** The policy as a function; checks it, naming the bad value. */
export function resolveResumeTools(policy: unknown): (call: ToolCall) => ResumeToolChoice {
  if (policy === undefined) return SERVE_ALL;
  if (typeof policy === 'function') {
    const choose = policy as (call: ToolCall) => unknown;
    return (call) => {
      const choice = choose(call);
      if (choice !== 'serve' && choice !== 'rerun')
        throw new InvalidArgumentError(`${OPTION}(${call.name})`, choice === 'replay' ? RENAMED : CHOICES, choice);
      return choice;
    };
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy))
    throw new InvalidArgumentError(
      OPTION,
      "{ default?: 'serve' | 'rerun', rerun?: names, serve?: names } or a function",
      policy,
    );
  const given = policy as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (key !== 'default' && key !== 'rerun' && key !== 'serve')
      throw new InvalidArgumentError(
        `${OPTION}.${key}`,
        key === 'replay' ? 'left out: `replay` is now `serve`' : 'one of `default`, `rerun`, `serve`',
        given[key],
      );
  const { default: fallback = 'serve', rerun = [], serve = [] } = given;
  if (fallback !== 'serve' && fallback !== 'rerun')
    throw new InvalidArgumentError(`${OPTION}.default`, fallback === 'replay' ? RENAMED : CHOICES, fallback);
  const names = (list: unknown, key: string): Set<string> => {
    if (!Array.isArray(list) || !list.every((n) => typeof n === 'string'))
      throw new InvalidArgumentError(`${OPTION}.${key}`, 'an array of tool names', list);
    return new Set(list as string[]);
  };
  const reruns = names(rerun, 'rerun');
  const serves = names(serve, 'serve');
  const both = [...reruns].find((n) => serves.has(n));
  if (both !== undefined) throw new InvalidArgumentError(`${OPTION}.rerun`, `names not also in ${OPTION}.serve`, both);
  return (call) => (reruns.has(call.name) ? 'rerun' : serves.has(call.name) ? 'serve' : fallback);
}
