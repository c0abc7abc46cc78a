import fc from 'fast-check';
import { skipJsonValue } from '../../lib/history/skipJsonValue';

/** Whether JSON.parse accepts the bytes, decoded as the history reader decodes them. */
function parses(bytes: Buffer): boolean {
  try {
    JSON.parse(bytes.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

/** skipJsonValue over the whole of `bytes`: accepted when it ends exactly at the end. */
function accepts(bytes: Buffer): boolean {
  return skipJsonValue(bytes, 0, bytes.length) === bytes.length;
}

const significantByte = fc.oneof(
  fc.constantFrom(
    0x22,
    0x5c,
    0x2c,
    0x3a,
    0x7b,
    0x7d,
    0x5b,
    0x5d,
    0x20,
    0x0a,
    0x00,
    0x2d,
    0x2e,
    0x2b,
    0x65,
    0x30,
    0x31,
    0x75,
    0x61,
    0x74,
    0x6e,
    0x66,
    0x80,
    0xc3,
    0xff,
  ),
  fc.integer({ min: 0, max: 255 }),
);

describe('skipJsonValue()', () => {
  it('finds the end of each kind of value, and stops at the first value', () => {
    for (const text of [
      '0',
      '-1.5e+3',
      '"a\\"b\\u00e9\\n"',
      'true',
      'false',
      'null',
      '[]',
      '{}',
      '[1,[2,{"a":[null]}]]',
      '{"a":{"b":"c"},"d":[true,false]}',
      '"é→😀"',
    ]) {
      expect(skipJsonValue(Buffer.from(text), 0, Buffer.byteLength(text))).toBe(Buffer.byteLength(text));
    }
    expect(skipJsonValue(Buffer.from('1,2'), 0, 3)).toBe(1);
    expect(skipJsonValue(Buffer.from('xx{"a":1}yy'), 2, 9)).toBe(9);
  });

  it('declines what is not JSON, and what it leaves to JSON.parse: whitespace, deep nesting', () => {
    for (const text of [
      '',
      '01',
      '1.',
      '.5',
      '-',
      '1e',
      '+1',
      '"a',
      '"\\x"',
      '"\\u12g4"',
      '"a\tb"',
      '[1,]',
      '{"a":1,}',
      '{"a"}',
      '{a:1}',
      'tru',
      'nul',
      '[1 ]',
      '{ "a":1}',
      '[',
    ]) {
      expect(accepts(Buffer.from(text))).toBe(false);
    }
    const deep = `${'['.repeat(65)}${']'.repeat(65)}`;
    expect(parses(Buffer.from(deep))).toBe(true);
    expect(accepts(Buffer.from(deep))).toBe(false);
    expect(accepts(Buffer.from(`${'['.repeat(64)}${']'.repeat(64)}`))).toBe(true);
  });

  it('accepts only what JSON.parse accepts, on JSON.stringify output (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const bytes = Buffer.from(JSON.stringify(value));
        if (accepts(bytes)) expect(parses(bytes)).toBe(true);
        // Plain JSON.stringify output, not too deep: always read without JSON.parse.
        expect(accepts(bytes)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts only what JSON.parse accepts, on damaged JSON and random bytes (property)', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.array(fc.record({ at: fc.nat(), byte: significantByte, drop: fc.boolean() }), {
          minLength: 1,
          maxLength: 4,
        }),
        (value, edits) => {
          const bytes = [...Buffer.from(JSON.stringify(value))];
          for (const { at, byte, drop } of edits) {
            const i = bytes.length === 0 ? 0 : at % bytes.length;
            if (drop) bytes.splice(i, 1);
            else bytes.splice(i, 0, byte);
          }
          const damaged = Buffer.from(bytes);
          if (accepts(damaged)) expect(parses(damaged)).toBe(true);
        },
      ),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (raw) => {
        const bytes = Buffer.from(raw);
        if (accepts(bytes)) expect(parses(bytes)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
