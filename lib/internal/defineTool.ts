import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { SdkTool, SdkToolContext, SdkToolOutput } from './sdkTools';

/** A tool whose `run` gets its input typed from `parameters`, its JSON Schema. */
export interface TypedTool<S extends JSONSchema, I = FromSchema<S>> {
  description?: string;
  /** The JSON Schema of the tool's input (an object schema), written in place: its type is read from it. */
  parameters: S;
  run(input: I, ctx: SdkToolContext): SdkToolOutput | Promise<SdkToolOutput>;
}

/**
 * A tool for the ready-made loops with its input typed from its schema:
 * `defineTool({ parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, run: (input) => read(input.path) })`
 * gives `run` an `input` of `{ path: string }` (with `json-schema-to-ts`), where a plain tool's
 * input is `any`. The loop checks each call's input against the same schema before `run`, so
 * the type holds at run time. Returns the tool as it is.
 */
// The input type as a defaulted second parameter, not FromSchema<S> in place: json-schema-to-ts's
// own advice against "type instantiation is excessively deep" in generic functions.
export function defineTool<const S extends JSONSchema, I = FromSchema<S>>(tool: TypedTool<S, I>): SdkTool {
  return tool as unknown as SdkTool;
}
