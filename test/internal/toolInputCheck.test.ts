import { toolInputCheck } from '../../lib/internal/toolInputCheck';

describe('toolInputCheck', () => {
  const schema = {
    type: 'object',
    properties: { path: { type: 'string' }, lines: { type: 'integer', minimum: 1 } },
    required: ['path'],
    additionalProperties: false,
  };

  it('passes input that matches, and names every problem of input that does not', () => {
    const check = toolInputCheck(schema);
    expect(check({ path: 'a.txt', lines: 3 })).toBeUndefined();
    expect(check({ lines: 0, mode: 'w' })).toBe(
      "input must have required property 'path'; input must NOT have additional properties (mode); input.lines must be >= 1",
    );
  });

  it('compiles a schema once, however many checks are made from it', () => {
    const fresh = { type: 'object', properties: { q: { type: 'string' } } };
    const a = toolInputCheck(fresh);
    const b = toolInputCheck(fresh);
    expect(a({ q: 1 })).toBe(b({ q: 1 }));
    expect(a({ q: 1 })).toBe('input.q must be string');
  });

  it('reads draft 2020-12 schemas with 2020-12 rules (prefixItems)', () => {
    const check = toolInputCheck({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] } },
    });
    expect(check({ pair: ['a', 1] })).toBeUndefined();
    expect(check({ pair: [1, 'a'] })).toBe('input.pair.0 must be string; input.pair.1 must be number');
  });

  it('ignores keywords meant for the provider, such as strict', () => {
    expect(toolInputCheck({ type: 'object', strict: true, properties: {}, examples: [{}] })({})).toBeUndefined();
  });

  it('throws for a schema that cannot be compiled', () => {
    expect(() => toolInputCheck({ type: 'object', required: 'path' })).toThrow(/schema is invalid/);
  });
});
