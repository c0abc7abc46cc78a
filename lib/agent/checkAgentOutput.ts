import { describeValue } from '../internal/describeValue';
import type { ToolCall } from './AgentLoop';

// Pure checks of what an AgentLoop operation returned. Each returns a problem in words, or
// undefined when the value keeps the contract.

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Usage as an LLMResponse reports it: optional non-negative numbers. */
export function usageProblem(usage: unknown): string | undefined {
  if (usage === undefined) return undefined;
  if (!isRecord(usage)) return `usage must be an object, got ${describeValue(usage)}`;
  for (const key of ['inputTokens', 'outputTokens', 'costUsd'] as const) {
    const value = usage[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      return `usage.${key} must be a non-negative number, got ${describeValue(value)}`;
    }
  }
  return undefined;
}

/** An LLMResponse: optional string text, optional tool calls with unique non-empty ids and names, optional usage. */
export function llmResponseProblem(response: unknown): string | undefined {
  if (!isRecord(response)) return `expected an LLMResponse object { text?, toolCalls?, usage? }, got ${describeValue(response)}`;
  if (response.text !== undefined && typeof response.text !== 'string') return `text must be a string, got ${describeValue(response.text)}`;
  if (response.toolCalls !== undefined) {
    if (!Array.isArray(response.toolCalls)) return `toolCalls must be an array, got ${describeValue(response.toolCalls)}`;
    const ids = new Set<string>();
    for (const [i, call] of (response.toolCalls as unknown[]).entries()) {
      if (!isRecord(call)) return `toolCalls[${i}] must be { id, name, input? }, got ${describeValue(call)}`;
      if (typeof call.id !== 'string' || call.id === '') return `toolCalls[${i}].id must be a non-empty string, got ${describeValue(call.id)}`;
      if (typeof call.name !== 'string' || call.name === '') return `toolCalls[${i}].name must be a non-empty string, got ${describeValue(call.name)}`;
      if (ids.has(call.id)) return `toolCalls[${i}].id ${describeValue(call.id)} repeats an earlier call's id`;
      ids.add(call.id);
    }
  }
  return usageProblem(response.usage);
}

/** A ToolResult for `call`: its callId, a string output, an optional boolean isError. */
export function toolResultProblem(result: unknown, call: ToolCall): string | undefined {
  if (!isRecord(result)) return `expected a ToolResult { callId, output, isError? } for call ${call.id} (${call.name}), got ${describeValue(result)}`;
  if (result.callId !== call.id) return `result.callId must be ${describeValue(call.id)} (the call's id), got ${describeValue(result.callId)}`;
  if (typeof result.output !== 'string') return `result.output must be a string, got ${describeValue(result.output)}`;
  if (result.isError !== undefined && typeof result.isError !== 'boolean') return `result.isError must be a boolean, got ${describeValue(result.isError)}`;
  return undefined;
}

/** A list of strings (commit ids, messages). `allowVoid` accepts undefined as an empty list. */
export function stringListProblem(value: unknown, allowVoid = false): string | undefined {
  if (value === undefined && allowVoid) return undefined;
  if (!Array.isArray(value)) return `expected an array of strings, got ${describeValue(value)}`;
  const bad = value.findIndex((v) => typeof v !== 'string');
  return bad === -1 ? undefined : `item ${bad} must be a string, got ${describeValue(value[bad])}`;
}
