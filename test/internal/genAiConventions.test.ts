// The span attribute names the library writes, held to the OpenTelemetry semantic conventions'
// own registry as @opentelemetry/semantic-conventions publishes it (a devDependency: the library
// loads no part of it at run time). lib/internal/genAiConventions.ts is the only place in lib/
// that spells a conventions name.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as stable from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { ASM, ASM_NAMESPACE, GEN_AI, GEN_AI_OPERATION, GEN_AI_TYPES } from '../../lib/internal/genAiConventions';
import { SEMCONV_REGISTRY } from '../helpers/semconvRegistry';

/** `gen_ai.usage.input_tokens` → `ATTR_GEN_AI_USAGE_INPUT_TOKENS`, the package's name for it. */
const constantOf = (name: string): string => `ATTR_${name.toUpperCase().replace(/\./g, '_')}`;
const registry = incubating as unknown as Record<string, unknown>;

describe('GEN_AI', () => {
  it.each(Object.entries(GEN_AI))("%s (%s) is the registry's own name", (_, name) => {
    expect(registry[constantOf(name)]).toBe(name);
  });

  it.each(Object.entries(GEN_AI_TYPES))("%s has the type the registry's YAML models give it", (name, type) => {
    expect(SEMCONV_REGISTRY.get(name)?.type).toBe(type);
  });

  it('names the stable ones as the stable entry does', () => {
    expect(stable.ATTR_ERROR_TYPE).toBe(GEN_AI.errorType);
    expect(stable.ATTR_EXCEPTION_MESSAGE).toBe(GEN_AI.exceptionMessage);
  });

  it('gives every name a registry type', () => {
    expect(Object.keys(GEN_AI_TYPES).sort()).toEqual(Object.values(GEN_AI).sort());
  });

  it("takes gen_ai.operation.name's values from the registry's", () => {
    expect(GEN_AI_OPERATION).toEqual({
      invokeAgent: incubating.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      invokeWorkflow: incubating.GEN_AI_OPERATION_NAME_VALUE_INVOKE_WORKFLOW,
      chat: incubating.GEN_AI_OPERATION_NAME_VALUE_CHAT,
      executeTool: incubating.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    });
    const members = SEMCONV_REGISTRY.get(GEN_AI.operationName)?.members ?? [];
    for (const value of Object.values(GEN_AI_OPERATION)) expect(members).toContain(value);
  });
});

describe('ASM', () => {
  it('sits in our own namespace, named by no registry', () => {
    for (const name of Object.values(ASM)) {
      expect(name.startsWith(ASM_NAMESPACE)).toBe(true);
      expect(registry[constantOf(name.replace(/\.$/, ''))]).toBeUndefined();
    }
  });
});

describe('lib/', () => {
  /** Every .ts file under `dir`. */
  const files = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) =>
        e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
      );

  it('spells no conventions attribute name outside genAiConventions.ts (comments aside)', () => {
    const lib = path.join(__dirname, '../../lib');
    const spelled: string[] = [];
    for (const file of files(lib)) {
      if (file.endsWith(path.join('internal', 'genAiConventions.ts'))) continue;
      const code = fs
        .readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const m of code.matchAll(/['"`]((?:gen_ai|error|exception)\.[a-z_.]+)['"`]/g))
        spelled.push(`${path.relative(lib, file)}: ${m[1]}`);
    }
    expect(spelled).toEqual([]);
  });
});
