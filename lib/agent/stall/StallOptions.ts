import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import {
  DEFAULT_IDLE_CALLS,
  DEFAULT_SAME_TOOL_CALLS,
  idleCalls,
  repeatedText,
  sameToolCall,
  type StallDetector,
} from './stallDetectors';

/** What a fired stall detector does: tell the model once and go on (`nudge`), or end the run (`stop`). */
export type StallPolicy = 'nudge' | 'stop';

/**
 * The adapter's `stall` option: which detectors watch the run for loops that go nowhere, and
 * what happens when one fires. Each built-in detector is on with its default unless set to `false`.
 */
export interface StallOptions {
  /** Fire when the same tool is asked for with the same input this many times in the run. Default 3; `false`: off. */
  sameToolCall?: number | false;
  /** Fire when a response's text is the same as the one before it. Default true. */
  repeatedText?: boolean;
  /** Fire after this many LLM calls in a row asked for no new tool call (name and input). Default 8; `false`: off. */
  idleCalls?: number | false;
  /** Further detectors, pure functions of the journal (see `StallDetector`), asked after the built-ins. */
  detectors?: readonly StallDetector[];
  /**
   * What a firing does: one policy for every firing, or one per firing in order (the last
   * applies to every later one). Default `['nudge', 'stop']`: the first firing nudges the
   * model, the second stops the run (outcome `stalled`).
   */
  policy?: StallPolicy | readonly StallPolicy[];
}

/** The stall option checked and filled in: the detectors in the order they are asked, and the policy per firing. */
export interface ResolvedStall {
  detectors: readonly StallDetector[];
  policy: readonly StallPolicy[];
}

const KEYS: ReadonlySet<string> = new Set(['sameToolCall', 'repeatedText', 'idleCalls', 'detectors', 'policy']);
const DEFAULT_POLICY: readonly StallPolicy[] = Object.freeze(['nudge', 'stop'] as const);
const POLICY_EXPECTED = "'nudge' or 'stop', or a non-empty array of them ('wrapUp' is not available yet)";

/**
 * Checks the `stall` option (named `name` in errors) and fills in its defaults: undefined when
 * it is off (absent or `false`). Every field is checked, unknown ones refused: a misspelt
 * detector would otherwise leave the run unwatched.
 */
export function resolveStall(value: unknown, name = 'stall'): ResolvedStall | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return resolveStall({}, name);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError(
      name,
      'true, false or an object { sameToolCall?, repeatedText?, idleCalls?, detectors?, policy? }',
      value,
    );
  for (const key of Object.keys(value))
    if (!KEYS.has(key))
      throw new InvalidArgumentError(
        `${name}.${key}`,
        'left out: the stall option takes sameToolCall, repeatedText, idleCalls, detectors and policy',
        (value as Record<string, unknown>)[key],
      );
  const options = value as StallOptions;
  const {
    sameToolCall: same = DEFAULT_SAME_TOOL_CALLS,
    repeatedText: text = true,
    idleCalls: idle = DEFAULT_IDLE_CALLS,
    detectors = [],
    policy = DEFAULT_POLICY,
  } = options;
  const out: StallDetector[] = [];
  if (same !== false) {
    if (!(Number.isSafeInteger(same) && same >= 2))
      throw new InvalidArgumentError(`${name}.sameToolCall`, 'an integer of at least 2, or false (off)', same);
    out.push(sameToolCall(same));
  }
  if (typeof text !== 'boolean') throw new InvalidArgumentError(`${name}.repeatedText`, 'true or false', text);
  if (text) out.push(repeatedText());
  if (idle !== false) {
    if (!(Number.isSafeInteger(idle) && idle >= 1))
      throw new InvalidArgumentError(`${name}.idleCalls`, 'a positive integer, or false (off)', idle);
    out.push(idleCalls(idle));
  }
  if (!Array.isArray(detectors))
    throw new InvalidArgumentError(
      `${name}.detectors`,
      'an array of functions (journal) => finding or undefined',
      detectors,
    );
  for (const [i, d] of (detectors as unknown[]).entries())
    if (typeof d !== 'function')
      throw new InvalidArgumentError(`${name}.detectors[${i}]`, 'a function (journal) => finding or undefined', d);
  out.push(...(detectors as StallDetector[]));
  if (out.length === 0)
    throw new InvalidArgumentError(
      name,
      'at least one detector on (all built-ins are off and detectors is empty)',
      value,
    );
  const policies = typeof policy === 'string' ? [policy] : policy;
  if (!Array.isArray(policies) || policies.length === 0)
    throw new InvalidArgumentError(`${name}.policy`, POLICY_EXPECTED, policy);
  for (const [i, p] of (policies as unknown[]).entries())
    if (p !== 'nudge' && p !== 'stop')
      throw new InvalidArgumentError(
        typeof policy === 'string' ? `${name}.policy` : `${name}.policy[${i}]`,
        POLICY_EXPECTED,
        p,
      );
  return { detectors: Object.freeze(out), policy: Object.freeze([...(policies as StallPolicy[])]) };
}
