import { describeValue } from '../../internal/describeValue';
import { USAGE_BOUNDS } from '../../internal/usageBounds';
import type { ResponseFieldName } from '../../internal/usageFields';
import type { ServerToolUses, ToolCall, Usage } from '../AgentLoop';

// Pure checks of what an AgentLoop operation returned. Each returns a problem in words, or
// undefined when the value keeps the contract.

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const USAGE_KEYS = [
  'inputTokens',
  'outputTokens',
  'cachedInputTokens',
  'cacheWriteTokens',
  'reasoningTokens',
  'costUsd',
] as const satisfies ReadonlyArray<keyof Usage>;

/** Compiles only while `splitUsage` keeps every usage field a response reports (USAGE_FIELDS, `grows: 'response'`). */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- a check for the compiler, never used as a type
type ResponseFieldsKept<T extends (typeof USAGE_KEYS)[number] = ResponseFieldName> = T;

/** Usage as an LLMResponse reports it: optional non-negative numbers. */
export function usageProblem(usage: unknown): string | undefined {
  return splitUsage(usage).problems[0];
}

/**
 * Splits reported usage into its valid fields and problems with the rest, so that a response
 * with one bad field (`inputTokens: NaN`) still pays for what it validly reports.
 */
export function splitUsage(usage: unknown): { valid: Usage; problems: readonly string[] } {
  if (usage === undefined || usage === null) return { valid: {}, problems: NO_PROBLEMS };
  if (!isRecord(usage)) return { valid: {}, problems: [`usage must be an object, got ${describeValue(usage)}`] };
  // Once per LLM response, not per move: a plain loop over the keys is cheap enough.
  const valid: Usage = {};
  let problems: string[] | undefined;
  for (const key of USAGE_KEYS) {
    const value = usage[key];
    if (value === undefined) continue;
    if (isAmount(value)) {
      const max = key === 'costUsd' ? USAGE_BOUNDS.responseCostUsd : USAGE_BOUNDS.responseTokens;
      if (value <= max) valid[key] = value;
      else
        (problems ??= []).push(`usage.${key} must be at most ${max} (the stated bound for one response), got ${value}`);
    } else (problems ??= []).push(`usage.${key} must be a non-negative number, got ${describeValue(value)}`);
  }
  // Uses of server tools: counts by kind, each valid one kept (their fees are priced from them).
  const uses = usage.serverToolUses;
  if (uses !== undefined) {
    const split = splitServerToolUses(uses, 'usage.serverToolUses');
    if (split.valid !== undefined) valid.serverToolUses = split.valid;
    if (split.problems.length > 0) (problems ??= []).push(...split.problems);
  }
  return { valid, problems: problems ?? NO_PROBLEMS };
}

/** The kinds of server tool use a `ServerToolUses` counts. */
export const SERVER_TOOL_KINDS = ['webSearch', 'webFetch', 'codeExecution'] as const satisfies ReadonlyArray<
  keyof ServerToolUses
>;

/**
 * Splits counts of server tool uses (`Usage.serverToolUses`, `LLMCallBound.serverToolUses`) into
 * the valid ones (non-negative integers, at most the stated bound for one response) and problems
 * with the rest, named from `path`. Unknown kinds are problems: a count no price reads would go
 * unbilled.
 */
export function splitServerToolUses(
  value: unknown,
  path: string,
): { valid: ServerToolUses | undefined; problems: string[] } {
  if (!isRecord(value))
    return {
      valid: undefined,
      problems: [`${path} must be an object { webSearch?, webFetch?, codeExecution? }, got ${describeValue(value)}`],
    };
  const valid: ServerToolUses = {};
  const problems: string[] = [];
  let any = false;
  for (const key of Object.keys(value)) {
    const n = value[key];
    if (!(SERVER_TOOL_KINDS as readonly string[]).includes(key)) {
      problems.push(`${path}.${key} is no kind of server tool use (expected ${SERVER_TOOL_KINDS.join(', ')})`);
      continue;
    }
    if (n === undefined) continue;
    if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= USAGE_BOUNDS.responseTokens) {
      valid[key as keyof ServerToolUses] = n;
      any = true;
    } else problems.push(`${path}.${key} must be a non-negative integer, got ${describeValue(n)}`);
  }
  return { valid: any ? valid : undefined, problems };
}

function isAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** Shared by every well-formed usage (one per LLM response): never written to. */
const NO_PROBLEMS: readonly string[] = Object.freeze([]);

/**
 * An LLMResponse: `text` (a string), `toolCalls` (an array of calls with string ids and
 * non-empty names), or both. An id may be empty or repeat another: local models send such
 * replies, and each call is still answered, in order — the ready-made loops give them unique
 * ids in the conversation they keep; optional `model` and `finishReason` strings. Usage is checked apart
 * (`splitUsage`): its bad fields are recorded, not fatal.
 */
export function llmResponseProblem(response: unknown): string | undefined {
  if (!isRecord(response))
    return `expected an LLMResponse object { text?, toolCalls?, usage? }, got ${describeValue(response)}`;
  if (response.text !== undefined && typeof response.text !== 'string')
    return `text must be a string, got ${describeValue(response.text)}`;
  if (response.toolCalls !== undefined) {
    if (!Array.isArray(response.toolCalls))
      return `toolCalls must be an array, got ${describeValue(response.toolCalls)}`;
    const calls = response.toolCalls as unknown[];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i];
      if (!isRecord(call)) return `toolCalls[${i}] must be { id, name, input? }, got ${describeValue(call)}`;
      // Each field read once: a getter could answer differently the second time.
      const id = call.id;
      if (typeof id !== 'string') return `toolCalls[${i}].id must be a string, got ${describeValue(id)}`;
      const name = call.name;
      if (typeof name !== 'string' || name === '')
        return `toolCalls[${i}].name must be a non-empty string, got ${describeValue(name)}`;
    }
  }
  if (response.text === undefined && response.toolCalls === undefined) {
    const keys = Object.keys(response);
    return `a response needs text (a string) or toolCalls (an array), got an object with ${keys.length === 0 ? 'no keys' : `keys ${keys.slice(0, 8).join(', ')}`} — return an LLMResponse, not the SDK's raw response`;
  }
  // Named, each read once: no array of names per response, no keyed loads.
  const model = response.model;
  if (model !== undefined && typeof model !== 'string') return `model must be a string, got ${describeValue(model)}`;
  const finishReason = response.finishReason;
  if (finishReason !== undefined && typeof finishReason !== 'string')
    return `finishReason must be a string, got ${describeValue(finishReason)}`;
  return undefined;
}

/** A ToolResult for `call`: its callId, a string output, an optional boolean isError. */
export function toolResultProblem(result: unknown, call: ToolCall): string | undefined {
  if (!isRecord(result))
    return `expected a ToolResult { callId, output, isError? } for call ${call.id} (${call.name}), got ${describeValue(result)}`;
  if (result.callId !== call.id)
    return `result.callId must be ${describeValue(call.id)} (the call's id), got ${describeValue(result.callId)}`;
  if (typeof result.output !== 'string') return `result.output must be a string, got ${describeValue(result.output)}`;
  if (result.isError !== undefined && typeof result.isError !== 'boolean')
    return `result.isError must be a boolean, got ${describeValue(result.isError)}`;
  return undefined;
}

/** A list of strings (commit ids, messages). `allowVoid` accepts undefined as an empty list. */
export function stringListProblem(value: unknown, allowVoid = false): string | undefined {
  if (value === undefined && allowVoid) return undefined;
  if (!Array.isArray(value)) return `expected an array of strings, got ${describeValue(value)}`;
  const bad = value.findIndex((v) => typeof v !== 'string');
  return bad === -1 ? undefined : `item ${bad} must be a string, got ${describeValue(value[bad])}`;
}
