import fc from 'fast-check';
import { safeFileName, uniqueFileNames } from '../../lib/batch/keeping/safeFileName';

const SAFE = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
/** What Windows opens as a device instead of a file: the part before the first dot names one. */
const isDeviceName = (name: string): boolean => /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i.test(name.split('.')[0]!);

describe('safeFileName', () => {
  it('keeps an id that is already a safe file name', () => {
    expect(safeFileName('task-42')).toBe('task-42');
    expect(safeFileName('fix_test.parse.v2')).toBe('fix_test.parse.v2');
  });

  it('replaces unsafe characters and adds a hash of the original id', () => {
    expect(safeFileName('tests/parse.test.ts::off by one')).toMatch(/^tests_parse\.test\.ts__off_by_one-[0-9a-f]{8}$/);
    expect(safeFileName('../../etc/passwd')).toMatch(/^_\._\.\._etc_passwd-[0-9a-f]{8}$/);
    expect(safeFileName('ticket #7 — ünïcode')).toMatch(/^ticket__7____n_code-[0-9a-f]{8}$/);
  });

  it('tells apart ids that map to the same characters', () => {
    expect(safeFileName('a/b')).not.toBe(safeFileName('a?b'));
    expect(safeFileName('a/b')).not.toBe('a_b');
  });

  it('avoids hidden files, Windows device names and over-long names', () => {
    expect(safeFileName('.env')).toMatch(/^_env-[0-9a-f]{8}$/);
    expect(safeFileName('CON')).toMatch(/^CON-[0-9a-f]{8}$/);
    expect(safeFileName('lpt1')).toMatch(/^lpt1-[0-9a-f]{8}$/);
    expect(safeFileName('x'.repeat(500))).toMatch(/^x{100}-[0-9a-f]{8}$/);
  });

  it('avoids Windows device names followed by an extension, which are the device too', () => {
    expect(safeFileName('con.txt')).toMatch(/^con_\.txt-[0-9a-f]{8}$/);
    expect(safeFileName('NUL.tar.gz')).toMatch(/^NUL_\.tar\.gz-[0-9a-f]{8}$/);
    expect(safeFileName('com1.jsonl')).toMatch(/^com1_\.jsonl-[0-9a-f]{8}$/);
    expect(safeFileName('console.log')).toBe('console.log');
    expect(safeFileName('con.txt')).not.toBe(safeFileName('con_.txt'));
  });

  it('never starts a name with a device name, whatever follows it', () => {
    const device = fc.constantFrom('con', 'CON', 'Prn', 'aux', 'nul', 'com1', 'COM9', 'lpt0', 'Lpt5');
    const rest = fc.string({ maxLength: 12, unit: fc.constantFrom('.', '.', 'a', '1', '_', '-', ' ', '/') });
    fc.assert(
      fc.property(device, rest, (name, tail) => {
        const file = safeFileName(name + tail);
        expect(isDeviceName(file)).toBe(false);
        expect(isDeviceName(`${file}.jsonl`)).toBe(false);
        expect(file).toMatch(SAFE);
      }),
    );
  });

  it('is deterministic and always safe', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 300, unit: 'binary' }), (id) => {
        const name = safeFileName(id);
        expect(name).toBe(safeFileName(id));
        expect(name).toMatch(SAFE);
        expect(name.length).toBeLessThanOrEqual(109);
        expect(isDeviceName(name)).toBe(false);
      }),
    );
  });
});

describe('uniqueFileNames', () => {
  it('gives names unique even ignoring case, in the order of the ids', () => {
    const names = uniqueFileNames(['Task', 'task', 'a/b', 'a_b', 'TASK']);
    expect(names[0]).toBe('Task');
    expect(names[1]).toMatch(/^task-[0-9a-f]{8}$/);
    expect(names[3]).toBe('a_b');
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(5);
  });

  it('never repeats a name, whatever the ids', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom('a', 'A', '/', '_', '.', 'b') }), {
          maxLength: 40,
        }),
        (ids) => {
          const names = uniqueFileNames(ids);
          expect(names).toHaveLength(ids.length);
          expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(ids.length);
          names.forEach((n) => expect(n).toMatch(SAFE));
        },
      ),
    );
  });
});
