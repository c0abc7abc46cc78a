import fc from 'fast-check';
import { uniqueCallIds } from '../../lib/internal/uniqueCallIds';

describe('uniqueCallIds', () => {
  it('keeps unique ids as they are, the same array', () => {
    const ids = ['a', 'b'];
    expect(uniqueCallIds(ids, () => 'z')).toBe(ids);
  });

  it('renames empty and repeated ids, never to an id the response has', () => {
    let n = 0;
    expect(uniqueCallIds(['', 'f1', 'f1', ''], () => `f${++n}`)).toEqual(['f2', 'f1', 'f3', 'f4']);
  });

  it('gives unique non-empty ids, keeping the first of each, for any ids (property-based)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('', 'a', 'b', 'n1', 'n2'), { maxLength: 12 }), (ids) => {
        let n = 0;
        const out = uniqueCallIds(ids, () => `n${++n}`);
        expect(out).toHaveLength(ids.length);
        expect(new Set(out).size).toBe(out.length);
        expect(out.every((id) => id !== '')).toBe(true);
        ids.forEach((id, i) => {
          if (id !== '' && ids.indexOf(id) === i) expect(out[i]).toBe(id);
        });
      }),
    );
  });
});
