import { toolInputCheck } from '../../internal/toolInputCheck';

/**
 * A tool's input schema in the Standard Schema form (standardschema.dev: `~standard` with
 * `validate`, plus the Standard JSON Schema `jsonSchema` converter). The AI SDK (`ai` 6 and 7)
 * takes it as a tool's `inputSchema`: it sends `jsonSchema.input()` to the model and checks each
 * call with `validate`. So `aiSdkTools` needs nothing from `ai` itself, and importing
 * `agent-state-machine/mcp` never loads it.
 */
export interface McpInputSchema {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) =>
      | { readonly value: Record<string, unknown>; readonly issues?: undefined }
      | { readonly issues: ReadonlyArray<{ readonly message: string }> };
    readonly jsonSchema: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
      readonly output: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

/**
 * The Standard Schema of `schema`, checked with the same validator (ajv) and message as the
 * other loops' tools, so a bad call is answered with it and never reaches the server.
 */
export function standardInputSchema(schema: Record<string, unknown>, toolName: string): McpInputSchema {
  const check = toolInputCheck(schema);
  // A fresh copy each time: the AI SDK adds `additionalProperties: false` to the schema it gets,
  // in place, and the server's own schema must stay as the server sent it.
  const json = (): Record<string, unknown> => structuredClone(schema);
  return {
    '~standard': {
      version: 1,
      vendor: 'agent-state-machine',
      validate: (value) => {
        const problem = check(value);
        return problem === undefined
          ? { value: value as Record<string, unknown> }
          : { issues: [{ message: `the arguments of ${toolName} do not match its input schema: ${problem}` }] };
      },
      jsonSchema: { input: json, output: json },
    },
  };
}
