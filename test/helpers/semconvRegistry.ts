import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import type { RegistryType } from '../../lib/internal/genAiConventions';

// The OpenTelemetry semantic conventions' own registry, as its YAML models define it, vendored
// unchanged in test/fixtures/semconv/ with their licence (see NOTICE.md there). The package
// @opentelemetry/semantic-conventions publishes the names; only the models carry the types and
// the enums' members.

/** One attribute of the registry: its type and, for an enum, the values it lists. */
export interface RegistryAttribute {
  type: RegistryType;
  /** An enum's members' values (an enum may take others: the conventions' enums are open). */
  members?: readonly string[];
}

interface YamlAttribute {
  id: string;
  type: string | { members: { value: string | number }[] };
}

const FOLDER = path.join(__dirname, '../fixtures/semconv');
const MODELS = ['gen-ai.registry.yaml', 'error.registry.yaml', 'exceptions.registry.yaml'];
const TYPES: ReadonlySet<string> = new Set(['string', 'int', 'double', 'boolean', 'string[]', 'any']);

function readRegistry(): ReadonlyMap<string, RegistryAttribute> {
  const out = new Map<string, RegistryAttribute>();
  for (const model of MODELS) {
    const doc = parse(fs.readFileSync(path.join(FOLDER, model), 'utf8')) as {
      groups: { type: string; attributes?: YamlAttribute[] }[];
    };
    for (const group of doc.groups)
      for (const a of group.attributes ?? []) {
        if (typeof a.type === 'object') {
          const values = a.type.members.map((m) => m.value);
          const type = values.every((v) => typeof v === 'string') ? 'string' : 'int';
          out.set(a.id, { type, members: values.map(String) });
        } else if (TYPES.has(a.type)) out.set(a.id, { type: a.type as RegistryType });
        else throw new Error(`${model}: ${a.id} has type ${a.type}, which this reader does not know`);
      }
  }
  return out;
}

/** Every attribute the vendored registry defines, by name. */
export const SEMCONV_REGISTRY: ReadonlyMap<string, RegistryAttribute> = readRegistry();
