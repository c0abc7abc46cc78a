import type { LLMResponse } from '../AgentLoop';

/** A model response as a framework reports it: the `LLMResponse` of an `AgentLoop`. */
export type MirrorResponse = LLMResponse;

/**
 * How a tool call ended: its output (an error result when `isError`), or what it threw. `json`:
 * the tool gave a value, not text, and `output` is its JSON; a resumed run is served the value.
 */
export type MirrorToolOutcome = { output: string; isError?: boolean; json?: boolean } | { error: unknown };
