import { standardInputSchema } from '../../../lib/integrations/mcp/standardInputSchema';

const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('standardInputSchema', () => {
  it('validates with the same checker and message as the other loops', () => {
    const s = standardInputSchema(schema, 'weather')['~standard'];
    expect(s.validate({ city: 'Oslo' })).toEqual({ value: { city: 'Oslo' } });
    expect(s.validate({ city: 1 })).toEqual({
      issues: [{ message: 'the arguments of weather do not match its input schema: input.city must be string' }],
    });
  });

  it('hands out a fresh copy of the JSON Schema each time, so a caller that edits it changes nothing', () => {
    const s = standardInputSchema(schema, 'weather')['~standard'];
    const copy = s.jsonSchema.input({ target: 'draft-07' });
    expect(copy).toEqual(schema);
    copy.additionalProperties = false;
    expect(s.jsonSchema.input({ target: 'draft-07' })).toEqual(schema);
    expect(schema).not.toHaveProperty('additionalProperties');
  });
});
