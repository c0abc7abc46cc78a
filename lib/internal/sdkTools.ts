import { messageOf } from './messageOf';
import { toolInputCheck } from './toolInputCheck';

/** What a tool's `run` gets: the turn's abort signal, the turn number and the call it answers. */
export interface SdkToolContext {
  signal: AbortSignal;
  turn: number;
  call: { id: string; name: string };
}

/**
 * What a tool's `run` returns: the text sent back to the LLM, or `{ output, isError: true }`
 * for a failure the tool reports itself (an MCP result with `isError`), which the LLM gets as
 * an error result without the tool having thrown.
 */
export type SdkToolOutput = string | { output: string; isError?: boolean | undefined };

/**
 * A tool an SDK loop offers the LLM: its description, its input's JSON Schema, and `run`,
 * which gets the parsed input and returns the text sent back to the LLM.
 */
export interface SdkTool {
  description?: string;
  /** The JSON Schema of the tool's input (an object schema). */
  parameters: Record<string, unknown>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the caller's own type: `run: (input) => input.path` must compile
  run(input: any, ctx: SdkToolContext): SdkToolOutput | Promise<SdkToolOutput>;
}

/** A loop's tool as every API's request describes one: its name, description (when it has one) and input schema. */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

/** The loop's tools as the record holds them now, each described for a request (each API wraps or renames the fields). */
export function toolDefinitions(tools: Readonly<Record<string, SdkTool>>): ToolDefinition[] {
  return Object.entries(tools).map(([name, t]) => ({
    name,
    ...(t.description !== undefined ? { description: t.description } : {}),
    parameters: t.parameters,
  }));
}

/**
 * A request's `tools`: those given in its `request` option (of kinds the loop does not run:
 * hosted or server tools) kept before the loop's own; left out when the loop offers none.
 */
export function besideGivenTools<T>(given: unknown, own: readonly T[]): { tools?: T[] } {
  return own.length > 0 ? { tools: [...((given as T[] | undefined) ?? []), ...own] } : {};
}

/** Where streamed text goes: each delta, with the turn and the attempt it belongs to (a new attempt means start over). */
export interface StreamTextHandler {
  onText(delta: string, info: { turn: number; attempt: number }): void;
}

/** The outcome of one tool call, before it becomes a `ToolResult`. */
export interface SdkToolOutcome {
  output: string;
  isError?: true;
}

/** A problem in a loop's options: the option, what was expected, what came. */
export interface OptionIssue {
  argument: string;
  expected: string;
  value: unknown;
}

/**
 * Checks the options every SDK loop shares and returns the first problem, or undefined.
 * Pure, so each integration throws its own error with it.
 */
export function checkSdkLoopOptions(options: unknown): OptionIssue | undefined {
  if (typeof options !== 'object' || options === null)
    return { argument: 'options', expected: 'an object { model, tools, … }', value: options };
  const o = options as Record<string, unknown>;
  if (typeof o.model !== 'string' || o.model === '')
    return { argument: 'options.model', expected: 'a non-empty string (the model id)', value: o.model };
  if (o.tools !== undefined) {
    if (typeof o.tools !== 'object' || o.tools === null || Array.isArray(o.tools)) {
      return {
        argument: 'options.tools',
        expected: 'a record { [name]: { description?, parameters, run } }',
        value: o.tools,
      };
    }
    for (const [name, tool] of Object.entries(o.tools)) {
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name))
        return {
          argument: `options.tools["${name}"]`,
          expected: 'a tool name of 1–64 letters, digits, _ or -',
          value: name,
        };
      if (typeof tool !== 'object' || tool === null)
        return {
          argument: `options.tools.${name}`,
          expected: 'an object { description?, parameters, run }',
          value: tool,
        };
      const t = tool as Record<string, unknown>;
      if (typeof t.parameters !== 'object' || t.parameters === null || Array.isArray(t.parameters)) {
        return { argument: `options.tools.${name}.parameters`, expected: 'a JSON Schema object', value: t.parameters };
      }
      if (typeof t.run !== 'function')
        return {
          argument: `options.tools.${name}.run`,
          expected: 'a function (input, ctx) => string | { output, isError? } (or a promise of one)',
          value: t.run,
        };
      // Compiled now, so that a schema no validator can use is an error of the options, not of a turn.
      try {
        toolInputCheck(t.parameters as Record<string, unknown>);
      } catch (error) {
        return {
          argument: `options.tools.${name}.parameters`,
          expected: `a JSON Schema a validator can compile (${messageOf(error)})`,
          value: t.parameters,
        };
      }
      if (t.description !== undefined && typeof t.description !== 'string')
        return {
          argument: `options.tools.${name}.description`,
          expected: 'a string or undefined',
          value: t.description,
        };
    }
  }
  if (o.system !== undefined && typeof o.system !== 'string')
    return { argument: 'options.system', expected: 'a string or undefined', value: o.system };
  if (o.messages !== undefined && !Array.isArray(o.messages))
    return {
      argument: 'options.messages',
      expected: 'an array of messages in the SDK format, or undefined',
      value: o.messages,
    };
  if (o.maxTokens !== undefined && !(Number.isInteger(o.maxTokens) && (o.maxTokens as number) > 0)) {
    return { argument: 'options.maxTokens', expected: 'a positive integer or undefined', value: o.maxTokens };
  }
  const stream = o.stream;
  if (stream !== undefined && typeof stream !== 'boolean') {
    if (
      typeof stream !== 'object' ||
      stream === null ||
      typeof (stream as { onText?: unknown }).onText !== 'function'
    ) {
      return {
        argument: 'options.stream',
        expected: 'a boolean or { onText(delta, { turn, attempt }) }',
        value: stream,
      };
    }
  }
  if (o.request !== undefined && (typeof o.request !== 'object' || o.request === null || Array.isArray(o.request))) {
    return {
      argument: 'options.request',
      expected: 'an object of extra request body fields, or undefined',
      value: o.request,
    };
  }
  for (const owned of ['model', 'messages', 'stream']) {
    if (o.request !== undefined && Object.prototype.hasOwnProperty.call(o.request, owned)) {
      return {
        argument: `options.request.${owned}`,
        expected: `left out: the loop sets it (use options.${owned === 'stream' ? 'stream' : owned})`,
        value: (o.request as Record<string, unknown>)[owned],
      };
    }
  }
  return undefined;
}

/**
 * Runs one tool call: finds the tool, parses its input (a JSON string as the LLM wrote it, or
 * an already parsed value), checks it against the tool's JSON Schema, and runs it. An unknown
 * tool, input that is not valid JSON or does not match the schema becomes an error result for
 * the LLM to correct, and the tool never runs — it is the LLM's mistake, not a failure of the
 * call. A tool may report its own failure as `{ output, isError: true }`; what it throws
 * propagates (the adapter turns it into an error result).
 */
export async function runSdkTool(
  tools: Readonly<Record<string, SdkTool>>,
  call: { id: string; name: string; input?: unknown },
  ctx: { signal: AbortSignal; turn: number },
): Promise<SdkToolOutcome> {
  const tool = Object.prototype.hasOwnProperty.call(tools, call.name) ? tools[call.name] : undefined;
  if (tool === undefined) {
    const known = Object.keys(tools);
    return {
      output: `error: there is no tool named "${call.name}"; the tools are: ${known.length === 0 ? '(none)' : known.join(', ')}`,
      isError: true,
    };
  }
  let input: unknown = call.input;
  if (typeof input === 'string') {
    if (input.trim() === '') input = {};
    else {
      try {
        input = JSON.parse(input);
      } catch (error) {
        return {
          output: `error: the arguments of ${call.name} are not valid JSON (${messageOf(error)}); send them again as one JSON object`,
          isError: true,
        };
      }
    }
  }
  if (input === undefined || input === null) input = {};
  const problem = toolInputCheck(tool.parameters)(input);
  if (problem !== undefined)
    return {
      output: `error: the arguments of ${call.name} do not match its input schema: ${problem}; send them again, corrected`,
      isError: true,
    };
  const output: unknown = await tool.run(input, {
    signal: ctx.signal,
    turn: ctx.turn,
    call: { id: call.id, name: call.name },
  });
  if (typeof output === 'string') return { output };
  if (typeof output === 'object' && output !== null && typeof (output as { output?: unknown }).output === 'string') {
    const { output: text, isError } = output as { output: string; isError?: unknown };
    if (isError !== undefined && typeof isError !== 'boolean')
      throw new TypeError(
        `tool ${call.name} returned isError ${JSON.stringify(isError)} (${typeof isError}), expected a boolean or undefined`,
      );
    return isError === true ? { output: text, isError: true } : { output: text };
  }
  throw new TypeError(
    `tool ${call.name} returned ${output === null ? 'null' : typeof output}, expected a string or { output: string, isError?: boolean }`,
  );
}
