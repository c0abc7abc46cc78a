// Instructions per move, counted by valgrind's callgrind: deterministic where wall time on
// a shared machine is not. The transition suite asks it for the counter-clock move when wall
// time cannot decide that target; run alone, it counts any rows (each takes about a minute).
//
// For each row, two runs of bench/instructionsChild.cjs under callgrind load the row's
// candidate bundle (bench/candidates/build.ts), warm it up for WARMUP cycles, then make 0 or
// CYCLES more cycles; the difference of the two totals over the extra moves is the figure.
// JIT compilation mostly happens during the warm-up, so it cancels out; what is left varies
// by about ±1.5% from run to run. INSTRUCTIONS_WARMUP and INSTRUCTIONS_CYCLES change the counts.
//
//   npx tsx bench/instructions.ts                    floor and library, counter clock
//   npx tsx bench/instructions.ts library:date xstate:counter:ring   rows as file:clock[:variant]
import { existsSync } from 'node:fs';
import path from 'node:path';
import { countInstructions, valgrindMissing } from './callgrind';
import { buildCandidates, CANDIDATE_DIR } from './candidates/build';
import { MOVES_PER_CYCLE } from './cycle';
import { failed } from './harness';

// 300,000 measured cycles: with fewer, JIT and GC work left over from the warm-up shows (the
// floor read 706 at 40,000 cycles and 677 at 300,000); repeat runs then agree within ±1.5%.
const WARMUP = cyclesFrom('INSTRUCTIONS_WARMUP', 100_000);
const CYCLES = cyclesFrom('INSTRUCTIONS_CYCLES', 300_000);

function cyclesFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name} must be a positive integer number of cycles, got ${JSON.stringify(raw)}`);
  return n;
}

function collected(args: readonly string[]): Promise<number> {
  return countInstructions(path.join(__dirname, 'instructionsChild.cjs'), args);
}

/**
 * Instructions per move of one row (`file:clock[:variant]`, e.g. `library:counter`), counted
 * by callgrind on the candidates' bundles (`buildCandidates()` first).
 */
export async function instructionsPerMove(row: string, warmup = WARMUP, cycles = CYCLES): Promise<number> {
  const [file = '', clock = 'counter', variant = '-'] = row.split(':');
  const bundle = path.join(CANDIDATE_DIR, `${file}.cjs`);
  if (!existsSync(bundle))
    throw new Error(
      `no candidate ${file}: the candidates are the files of bench/candidates/ (floor, library, xstate, jsm)`,
    );
  const base = await collected([bundle, clock, variant, String(warmup), '0']);
  const more = await collected([bundle, clock, variant, String(warmup), String(cycles)]);
  return (more - base) / (cycles * MOVES_PER_CYCLE);
}

async function main(): Promise<void> {
  const missing = valgrindMissing();
  if (missing !== undefined) throw new Error(missing);
  await buildCandidates();
  const rows = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['floor:counter', 'library:counter'];
  for (const row of rows)
    console.log(`${row.padEnd(24)} ${(await instructionsPerMove(row)).toFixed(0)} instructions/move`);
}

if (require.main === module) main().catch(failed);
