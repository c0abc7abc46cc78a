import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { ToolCall } from '../AgentLoop';

/** What a resumed run does with a tool call the interrupted run had made: serve its recorded result, or run it again. */
export type ResumeToolChoice = 'replay' | 'rerun';

/**
 * Per tool, what a resumed run does with the calls the interrupted run had made: `'replay'`
 * serves the journaled result without running the tool (the default: a tool with side effects
 * must not run twice); `'rerun'` runs it again (for tools that only read). A call that had
 * started but has no journaled result is run again only under `'rerun'`; under `'replay'` it is
 * answered as interrupted, and the LLM decides. Either `{ default?, rerun?, replay? }` with
 * tool names, or a function of the call.
 */
export type ResumeToolPolicy =
  | { default?: ResumeToolChoice; rerun?: readonly string[]; replay?: readonly string[] }
  | ((call: ToolCall) => ResumeToolChoice);

/** The policy as a function; checks it, naming the bad value. */
export function resolveResumeTools(policy: unknown, name = 'resumeTools'): (call: ToolCall) => ResumeToolChoice {
  if (policy === undefined) return () => 'replay';
  if (typeof policy === 'function') {
    const choose = policy as (call: ToolCall) => unknown;
    return (call) => {
      const choice = choose(call);
      if (choice !== 'replay' && choice !== 'rerun')
        throw new InvalidArgumentError(`${name}(${call.name})`, "'replay' or 'rerun'", choice);
      return choice;
    };
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy))
    throw new InvalidArgumentError(
      name,
      "{ default?: 'replay' | 'rerun', rerun?: names, replay?: names } or a function",
      policy,
    );
  const { default: fallback = 'replay', rerun = [], replay = [] } = policy as Record<string, unknown>;
  if (fallback !== 'replay' && fallback !== 'rerun')
    throw new InvalidArgumentError(`${name}.default`, "'replay' or 'rerun'", fallback);
  const names = (list: unknown, key: string): Set<string> => {
    if (!Array.isArray(list) || !list.every((n) => typeof n === 'string'))
      throw new InvalidArgumentError(`${name}.${key}`, 'an array of tool names', list);
    return new Set(list as string[]);
  };
  const reruns = names(rerun, 'rerun');
  const replays = names(replay, 'replay');
  const both = [...reruns].find((n) => replays.has(n));
  if (both !== undefined) throw new InvalidArgumentError(`${name}.rerun`, `names not also in ${name}.replay`, both);
  return (call) => (reruns.has(call.name) ? 'rerun' : replays.has(call.name) ? 'replay' : fallback);
}
