import { cut, oneLine, plural } from '../../lib/internal/text';

describe('plural()', () => {
  it('counts with a thousands separator and an s where it belongs', () => {
    expect([plural(0, 'run'), plural(1, 'run'), plural(1204, 'run')]).toEqual(['0 runs', '1 run', '1,204 runs']);
  });
});

describe('cut()', () => {
  it('keeps short text and cuts long text to max characters with an ellipsis', () => {
    expect(cut('abc', 3)).toBe('abc');
    expect(cut('abcdef', 4)).toBe('abc…');
    expect(cut('abcdef', 4)).toHaveLength(4);
  });
});

describe('oneLine()', () => {
  it('folds line breaks and runs of space into one space', () => {
    expect(oneLine('  error:\n  at line 3\t(x)  ')).toBe('error: at line 3 (x)');
  });
});
