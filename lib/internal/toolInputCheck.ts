import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';

// ajv: the validator the JSON Schema ecosystem (and the MCP SDK) uses; it compiles each schema
// once into a function, so checking a call costs microseconds. `strict: false` because tool
// schemas carry keywords meant for the provider (`strict`, titles, examples) that a validator
// should ignore, not reject. Draft 2020-12 schemas get ajv's 2020 build, all others draft-07.
const draft07 = new Ajv({ strict: false, allErrors: true });
const draft2020 = new Ajv2020({ strict: false, allErrors: true });
const compiled = new WeakMap<object, ValidateFunction>();

/**
 * The check of a tool's input against its JSON Schema, compiled once per schema object. Throws
 * (with ajv's message) for a schema that cannot be compiled: loops call it when they are made,
 * so a bad schema is an error in their options, not in a turn.
 */
export function toolInputCheck(schema: Record<string, unknown>): (input: unknown) => string | undefined {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    const ajv = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12') ? draft2020 : draft07;
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  const check = validate;
  return (input) => (check(input) ? undefined : describeErrors(check.errors ?? []));
}

/** `input.path must be integer; input must have required property 'file'`: every problem, briefly. */
function describeErrors(errors: readonly ErrorObject[]): string {
  const lines = errors
    .slice(0, 5)
    .map(
      (e) =>
        `input${e.instancePath.replace(/\//g, '.')} ${e.message ?? 'is invalid'}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})` : ''}`,
    );
  if (errors.length > 5) lines.push(`and ${errors.length - 5} more`);
  return lines.join('; ');
}
