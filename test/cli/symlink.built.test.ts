// A history path that is a symbolic link may point at any file (a key, a password file): the
// readers name the path and what they expected, and never show the target's content, whichever
// command reads it. The built executable, in a child process.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildCli, runBuiltCli } from '../helpers/builtCli';

const SECRET = 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI';
let dir: string;
beforeAll(() => buildCli(), 120_000);
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-link-'));
  fs.writeFileSync(path.join(dir, 'credentials'), `${SECRET}\nregion=eu-west-1\n`);
  fs.mkdirSync(path.join(dir, 'runs'));
  fs.symlinkSync('../credentials', path.join(dir, 'runs', 'task-1.jsonl'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('agent-sm on a history file that is a symbolic link to something else', () => {
  it('names the path, what was expected and the link, and shows nothing of the target', () => {
    const link = path.join(dir, 'runs', 'task-1.jsonl');
    const expected =
      `${link}:1: corrupt line: not a history line: expected JSON Lines written by JsonlHistorySink; ` +
      `${link} is a symbolic link to ../credentials, whose content is not shown`;
    for (const args of [
      ['inspect', link],
      ['show', link],
      ['validate', link],
      ['replay', link],
      ['export', 'otlp', link],
      ['inspect', path.join(dir, 'runs')],
      ['inspect', '--salvage', link],
    ]) {
      const result = runBuiltCli(args);
      expect({ args, leaked: `${result.stdout}${result.stderr}`.includes('wJalrXUtnFEMI') }).toEqual({
        args,
        leaked: false,
      });
      expect(`${result.stdout}${result.stderr}`).not.toContain('AWS_SECRET');
      if (args[1] !== '--salvage' && args[1] !== path.join(dir, 'runs'))
        expect({ args, stderr: result.stderr }).toEqual({
          args,
          stderr: expect.stringContaining(`agent-sm: error: ${expected}`) as string,
        });
    }
    expect(runBuiltCli(['inspect', '--salvage', link]).stderr).toContain(
      `${link}:1: skipped a corrupt line: not a history line: expected JSON Lines written by JsonlHistorySink;`,
    );
  }, 60_000);
});
