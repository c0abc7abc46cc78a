import { ASM_NAMESPACE, type RegistryType } from '../../lib/internal/genAiConventions';
import { SEMCONV_REGISTRY } from './semconvRegistry';

// Whether the attributes a span path emits keep to the OpenTelemetry semantic conventions: each
// name is the registry's, written with the registry's type (both from its own YAML models,
// vendored in test/fixtures/semconv/), or sits in our own namespace.

/** One attribute as emitted: a live span's plain value, or an OTLP export's typed `AnyValue`. */
export interface EmittedAttribute {
  /** Where it was seen: `chat gpt-local (live)`, `event exception of …`. */
  where: string;
  name: string;
  value: unknown;
}

/** Why `attribute` does not keep to the conventions, or undefined when it does. */
export function conformanceIssue({ where, name, value }: EmittedAttribute): string | undefined {
  if (name.startsWith(ASM_NAMESPACE)) return undefined;
  const defined = SEMCONV_REGISTRY.get(name);
  if (defined === undefined)
    return `${where}: ${name} is not in the registry, nor in our namespace (${ASM_NAMESPACE}*)`;
  const { type } = defined;
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
