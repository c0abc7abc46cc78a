import fc from 'fast-check';
import { encode as cl100k } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { encode as o200k } from 'gpt-tokenizer/cjs/encoding/o200k_base';
import {
  IMAGE_PART_TOKENS,
  MESSAGE_TOKENS,
  REQUEST_TOKENS,
  requestTokenBound,
  utf8Length,
} from '../../lib/internal/requestTokenBound';

// The ready-made loops' input bound against real BPE tokenizers (OpenAI's o200k and cl100k):
// whatever the text (any Unicode, emoji, CJK, code, long runs of one character), the bound of
// a Chat Completions request is at least the tokens of its content plus OpenAI's documented
// overheads (3 per message, 3 for the reply, tool definitions rendered as text).
const textArb = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ unit: fc.constantFrom('a', ' ', '\n', '0', '€', '日', '🙂', '{', '"'), maxLength: 600 }),
);

describe('requestTokenBound', () => {
  it('counts UTF-8 bytes: 1 to 4 a character, 3 for a lone surrogate (as its replacement character encodes)', () => {
    expect(utf8Length('')).toBe(0);
    expect(utf8Length('a')).toBe(1);
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('€')).toBe(3);
    expect(utf8Length('日本')).toBe(6);
    expect(utf8Length('🙂')).toBe(4);
    expect(utf8Length('a\ud83d')).toBe(4);
    expect(utf8Length('\ude42b')).toBe(4);
    expect(utf8Length(JSON.stringify({ k: 'x🙂é' }))).toBe(new TextEncoder().encode('{"k":"x🙂é"}').length);
  });

  it('is never below the tokens of the request content plus the provider overheads (o200k, cl100k; property-based)', () => {
    fc.assert(
      fc.property(
        textArb,
        fc.array(fc.record({ role: fc.constantFrom('user', 'assistant', 'tool'), content: textArb }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.array(fc.record({ name: fc.stringMatching(/^[a-z_]{1,20}$/), description: textArb }), { maxLength: 3 }),
        (system, messages, tools) => {
          const all = [{ role: 'system', content: system }, ...messages];
          const body = {
            model: 'gpt-4o-mini',
            messages: all,
            tools: tools.map((t) => ({
              type: 'function',
              function: { name: t.name, description: t.description, parameters: { type: 'object', properties: {} } },
            })),
          };
          const bound = requestTokenBound(body, all.length, tools.length);
          for (const encode of [o200k, cl100k]) {
            // What the provider counts: each message's content and role, 3 tokens around each
            // message, 3 priming the reply, and each tool rendered as a TypeScript-like declaration.
            let provider = 3;
            for (const m of all) provider += 3 + encode(m.role).length + encode(m.content).length;
            if (tools.length > 0) {
              provider += encode('# Tools\n\n## functions\n\nnamespace functions {\n\n} // namespace functions').length;
              for (const t of tools) provider += encode(`// ${t.description}\ntype ${t.name} = () => any;\n\n`).length;
            }
            expect(bound).toBeGreaterThanOrEqual(provider);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('adds the stated tokens for each image part, which bytes do not bound', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://x.test/a.png' } },
            { type: 'text', text: 'hi' },
          ],
        },
      ],
    };
    expect(requestTokenBound(body, 1, 0)).toBe(
      Buffer.byteLength(JSON.stringify(body)) + REQUEST_TOKENS + MESSAGE_TOKENS + IMAGE_PART_TOKENS,
    );
  });
});
