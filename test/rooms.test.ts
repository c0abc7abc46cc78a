// The rooms of lib/agent/ and lib/batch/, as their READMEs and docs/develop.md state them, held
// by `npm run check:layers`: dependency-cruiser, run with the repository's own config on a tree
// of its own, in which each room imports every other (and the files above the rooms). Each
// import the rooms' layering forbids is reported under its room's rule, and no allowed one is.
// A room rule (`<area>-<room>-room`) dropped, loosened or misspelt in .dependency-cruiser.cjs
// fails here; the layering is restated below, as docs/develop.md and the rooms' READMEs give it.
// The rules about lib/agent/'s words and its two entries are not exercised here.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

const BELOW_TURN = ['journal', 'money', 'retry', 'options', 'stall'];
/** lib/agent/'s rooms and the rooms each may use (the words, lib/agent/*.ts, all may). */
const AGENT_ROOMS: Record<string, readonly string[]> = {
  money: [],
  options: [],
  journal: ['money'],
  retry: ['options'],
  stall: ['journal', 'money'],
  turn: BELOW_TURN,
  calls: ['turn', ...BELOW_TURN],
  endings: ['calls', 'turn', ...BELOW_TURN],
  adapter: ['endings', 'calls', 'turn', ...BELOW_TURN],
  mirror: ['endings', 'calls', 'turn', ...BELOW_TURN],
};
/** lib/batch/'s rooms and the rooms each may use (none may use the batch's own files above them). */
const BATCH_ROOMS: Record<string, readonly string[]> = {
  keeping: [],
  resume: ['keeping'],
  tasks: ['keeping'],
  raises: ['keeping'],
  reading: ['keeping', 'raises'],
  approvals: ['keeping', 'tasks', 'reading'],
};

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string };
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-rooms-'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs' } }));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const write = (file: string, text: string): void => {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), text);
};

/**
 * In lib/<area>/, a file in each room that imports a file of every other room, and `top` (a file
 * of the area itself); then the violations dependency-cruiser reports under `<area>-…-room` rules.
 */
function roomViolations(area: string, rooms: Record<string, readonly string[]>, top: string): Violation[] {
  const names = Object.keys(rooms);
  write(`lib/${area}/${top}.ts`, 'export const top = 1;\n');
  for (const room of names) write(`lib/${area}/${room}/target.ts`, `export const ${room} = 1;\n`);
  for (const room of names) {
    const others = names.filter((n) => n !== room);
    write(
      `lib/${area}/${room}/usesAll.ts`,
      [
        `import { top } from '../${top}';`,
        ...others.map((o) => `import { ${o} } from '../${o}/target';`),
        `export const all = [top, ${others.join(', ')}];`,
      ].join('\n'),
    );
  }
  const out = execFileSync(
    process.execPath,
    [DEPCRUISE, `lib/${area}`, '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'],
    { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  ).toString();
  const result = JSON.parse(out) as { summary: { violations: Violation[] } };
  return result.summary.violations.filter((v) => new RegExp(`^${area}-[a-z]+-room$`).test(v.rule.name));
}

/** What the layering says: every import from a room to a room it may not use, and to `top` when `topAllowed` is false. */
function expected(area: string, rooms: Record<string, readonly string[]>, top: string, topAllowed: boolean): string[] {
  const names = Object.keys(rooms);
  const pairs: string[] = [];
  for (const room of names) {
    const from = `lib/${area}/${room}/usesAll.ts`;
    if (!topAllowed) pairs.push(`${area}-${room}-room: ${from} -> lib/${area}/${top}.ts`);
    for (const other of names)
      if (other !== room && !rooms[room]!.includes(other))
        pairs.push(`${area}-${room}-room: ${from} -> lib/${area}/${other}/target.ts`);
  }
  return pairs.sort();
}

const seen = (violations: Violation[]): string[] =>
  violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();

describe('the rooms of lib/agent/ and lib/batch/ (dependency-cruiser rules)', () => {
  it("lib/agent/: each room uses only the rooms below it and the words, whichever room's rule it is", () => {
    const found = seen(roomViolations('agent', AGENT_ROOMS, 'Words'));
    expect(found).toEqual(expected('agent', AGENT_ROOMS, 'Words', true));
    // A sanity check on the tree itself: the floor (money) is refused every other room.
    expect(found.filter((v) => v.startsWith('agent-money-room'))).toHaveLength(Object.keys(AGENT_ROOMS).length - 1);
  });

  it("lib/batch/: each room uses only the rooms it names, and never the batch's own files above the rooms", () => {
    const found = seen(roomViolations('batch', BATCH_ROOMS, 'runBatch'));
    expect(found).toEqual(expected('batch', BATCH_ROOMS, 'runBatch', false));
    expect(found.filter((v) => v.startsWith('batch-keeping-room'))).toHaveLength(Object.keys(BATCH_ROOMS).length);
  });
});
