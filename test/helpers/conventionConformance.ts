import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { ASM_NAMESPACE, GEN_AI_PROPOSED, GEN_AI_TYPES, type RegistryType } from '../../lib/internal/genAiConventions';

// Whether the attributes a span path emits keep to the OpenTelemetry semantic conventions: each
// name is the registry's (as @opentelemetry/semantic-conventions publishes it), written with the
// registry's type, or sits in our own namespace. The proposed cost attributes are let through by
// name, as proposed: they are in no registry yet.

/** One attribute as emitted: a live span's plain value, or an OTLP export's typed `AnyValue`. */
export interface EmittedAttribute {
  /** Where it was seen: `chat gpt-local (live)`, `event exception of …`. */
  where: string;
  name: string;
  value: unknown;
}

/** Every attribute name the registry defines (the package's `ATTR_*` constants, stable and incubating). */
const REGISTRY: ReadonlySet<string> = new Set(
  Object.entries(incubating)
    .filter(([key, value]) => key.startsWith('ATTR_') && typeof value === 'string')
    .map(([, value]) => value as string),
);

/** The registry's types of the names the OTel SDK writes on our spans for us (`recordException`). */
const SDK_TYPES: Readonly<Record<string, RegistryType>> = {
  'exception.type': 'string',
  'exception.message': 'string',
  'exception.stacktrace': 'string',
};

/** Why `attribute` does not keep to the conventions, or undefined when it does. */
export function conformanceIssue({ where, name, value }: EmittedAttribute): string | undefined {
  if (name.startsWith(ASM_NAMESPACE)) return undefined;
  if (!REGISTRY.has(name) && !GEN_AI_PROPOSED.has(name))
    return `${where}: ${name} is not in the registry, nor in our namespace (${ASM_NAMESPACE}*)`;
  const type = (GEN_AI_TYPES as Record<string, RegistryType>)[name] ?? SDK_TYPES[name];
  if (type === undefined) return `${where}: ${name} is in the registry, but its type is not known here`;
  const got = typeOf(value);
  return fits(got, type) ? undefined : `${where}: ${name} is written as ${got}, the registry's type is ${type}`;
}

/** The issues of every attribute in `attributes`. */
export function conformanceIssues(attributes: readonly EmittedAttribute[]): string[] {
  return attributes.map(conformanceIssue).filter((i): i is string => i !== undefined);
}

type Written = RegistryType | 'number' | 'other';

/** The type a value is written as: OTLP's typed values say so; a live value's number is an int when it is whole. */
function typeOf(value: unknown): Written {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    if ('stringValue' in v) return 'string';
    if ('intValue' in v) return 'int';
    if ('doubleValue' in v) return 'double';
    if ('boolValue' in v) return 'boolean';
    if ('arrayValue' in v) {
      const values = (v.arrayValue as { values?: unknown[] }).values ?? [];
      return values.every((x) => typeOf(x) === 'string') ? 'string[]' : 'other';
    }
    return 'other';
  }
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'number' : 'double';
  if (Array.isArray(value)) return value.every((x) => typeof x === 'string') ? 'string[]' : 'other';
  return 'other';
}

function fits(got: Written, type: RegistryType): boolean {
  // `any` is a structured value, which we write as JSON text.
  if (type === 'any') return got === 'string';
  // A live whole number is an int, or a double that came out whole ($0).
  if (got === 'number') return type === 'int' || type === 'double';
  // OTLP writes a whole double as a double; an int attribute must not be a fraction.
  return got === type;
}
