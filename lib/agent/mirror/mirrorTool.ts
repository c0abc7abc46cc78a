import { safeStringify } from '../../internal/safeStringify';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import type { ToolCall } from '../AgentLoop';
import type { MirrorToolOutcome } from './MirrorOutcomes';
import type { MirrorStop } from './MirrorStop';

/** A recorded tool result, as the journal keeps it. */
export interface RecordedToolAnswer {
  output: string;
  isError: boolean;
  /** The tool gave a value, not text: `output` is its JSON (`JSON.parse` gives the value back). */
  json?: true;
}

/**
 * How a framework's tool call goes through `StepMirror.tool`: what the framework's tool gives
 * back for a result served from the journal, how a refusal stops the framework, and the text the
 * journal keeps of an output. Each has a default that fits a tool whose `execute` returns its
 * output and throws its errors.
 */
export interface MirroredTool<T> {
  /** A resumed run's recorded result, as the framework's tool returns it. Default: its output text (a string, whatever `T` is), or an Error with it thrown for an error result. */
  served?: (answer: RecordedToolAnswer) => T | Promise<T>;
  /** Stops the framework with the mirror's reason (a spent budget, a cancel, an unasked approval); must throw. Default: throws it. */
  refuse?: (stop: MirrorStop) => never;
  /** The text the journal keeps of the tool's output. Default: a string as it is, anything else as JSON. */
  output?: (value: T) => string;
}

/** The steps of a tool call that `mirrorTool` sequences (StepMirror's). */
export interface MirrorToolSteps {
  recordedTool(call: ToolCall): RecordedToolAnswer | undefined;
  toolStart(call: ToolCall): Promise<MirrorStop | undefined>;
  toolEnd(callId: string, outcome: MirrorToolOutcome): void;
}

const TOOL_HOOKS = ['served', 'refuse', 'output'] as const;
const MIRRORED_TOOL_KEYS: ReadonlySet<string> = new Set(TOOL_HOOKS);
/** A call with no hooks: every default. */
const NO_HOOKS: { readonly [K in keyof MirroredTool<unknown>]?: undefined } = Object.freeze({});

/**
 * One tool call of a framework, through the mirror (`StepMirror.tool`): a resumed run's
 * recorded result is served by the tool policy without running the tool; otherwise the call is
 * gated (refused when a budget is spent, the run cancelled, an approval unasked), `run` runs
 * it, and how it ended is recorded and journaled. An integration tells the mirror its tools'
 * calls here and sequences none of the steps itself.
 */
export async function mirrorTool<T>(
  steps: MirrorToolSteps,
  call: ToolCall,
  run: () => T | Promise<T>,
  how: MirroredTool<T> = NO_HOOKS,
): Promise<T> {
  if (typeof run !== 'function') throw new InvalidArgumentError('run', 'a function that runs the tool call', run);
  if (typeof how !== 'object' || how === null)
    throw new InvalidArgumentError('how', 'an object { served?, refuse?, output? }', how);
  // for…in and a fixed list: nothing made on every call (the mirror step's path).
  for (const key in how)
    if (Object.hasOwn(how, key) && !MIRRORED_TOOL_KEYS.has(key))
      throw new InvalidArgumentError(
        `how.${key}`,
        'left out: StepMirror.tool takes served, refuse and output',
        (how as Record<string, unknown>)[key],
      );
  for (const key of TOOL_HOOKS)
    if (how[key] !== undefined && typeof how[key] !== 'function')
      throw new InvalidArgumentError(`how.${key}`, 'a function, or left out', how[key]);
  const answer = steps.recordedTool(call);
  if (answer !== undefined) return how.served === undefined ? servedOutput<T>(answer) : how.served(answer);
  const stop = await steps.toolStart(call);
  if (stop !== undefined) {
    if (how.refuse !== undefined) how.refuse(stop);
    throw stop;
  }
  let value: T;
  try {
    value = await run();
  } catch (error) {
    steps.toolEnd(call.id, { error });
    throw error;
  }
  // Without an `output` hook, a value JSON writes whole is kept as its JSON and said to be.
  const json = how.output === undefined && typeof value !== 'string' ? wholeJson(value) : undefined;
  steps.toolEnd(call.id, json !== undefined ? { output: json, json: true } : { output: outputText(value, how.output) });
  return value;
}

/**
 * `value`'s JSON when `JSON.parse` gives it back as the framework saw it: a part shared twice
 * written in full, as a provider gets it. Undefined for what JSON cannot write (a cycle, a
 * bigint, a function, undefined): that is kept as text, never served as a value it was not.
 */
function wholeJson(value: unknown): string | undefined {
  try {
    const text = JSON.stringify(value) as string | undefined;
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

function servedOutput<T>(answer: RecordedToolAnswer): T {
  if (answer.isError) throw new Error(answer.output);
  return answer.output as T;
}

/** What the journal keeps of `value`: never a throw of the framework's (an `output` hook that throws is named). */
function outputText<T>(value: T, output: ((value: T) => string) | undefined): string {
  if (output === undefined) return typeof value === 'string' ? value : safeStringify(value ?? null);
  let text: unknown;
  try {
    text = output(value);
  } catch (error) {
    return `[output(value) threw: ${error instanceof Error ? error.message : String(error)}]`;
  }
  return typeof text === 'string' ? text : safeStringify(text ?? null);
}
