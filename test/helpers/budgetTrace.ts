import { createHash } from 'node:crypto';
import { CHARGE_FIELD_NAMES } from '../../lib/internal/fieldLists';
import { CALL_CODES, WRAP_CODES } from '../../lib/integrations/bullmq/budgetFields';
import { BEGIN, RECORD, SKIP, STEP } from '../../lib/integrations/bullmq/scripts';

// The trace check: the budget scripts a real batch ran, in the order Redis ran them (MONITOR),
// replayed through the model's step relation (lib/integrations/bullmq/model/budget.pml: its
// worker's order of steps, and what each script does to the money), in dollars instead of the
// model's units. What the replay finds is compared with Redis's own figures by the test.

/** One budget script as Redis ran it: its name, its keys and its arguments. */
export interface TracedScript {
  script: 'begin' | 'step' | 'record' | 'skip';
  keys: string[];
  argv: string[];
}

const sha1 = (text: string | Buffer): string => createHash('sha1').update(text).digest('hex');

/** A MONITOR argument's bytes: Redis shows `\n`, `\"`, `\\`, `\xHH` (sdscatrepr) for what is not printable. */
export function unescapeMonitor(shown: string): Buffer {
  const bytes: number[] = [];
  const named: Record<string, number> = { n: 10, r: 13, t: 9, a: 7, b: 8, '"': 34, '\\': 92 };
  for (let i = 0; i < shown.length; i++) {
    const c = shown[i]!;
    if (c === '\\' && i + 1 < shown.length) {
      const next = shown[i + 1]!;
      if (next === 'x') {
        bytes.push(parseInt(shown.slice(i + 2, i + 4), 16));
        i += 3;
        continue;
      }
      if (named[next] !== undefined) {
        bytes.push(named[next]);
        i += 1;
        continue;
      }
    }
    bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes);
}
const SCRIPTS = new Map<string, TracedScript['script']>([
  [sha1(BEGIN), 'begin'],
  [sha1(STEP), 'step'],
  [sha1(RECORD), 'record'],
  [sha1(SKIP), 'skip'],
]);

/** A MONITOR line's command as a traced script of the batch whose budget key is `budgetKey`, or undefined. */
export function tracedScript(args: readonly string[], budgetKey: string): TracedScript | undefined {
  const command = args[0]?.toLowerCase();
  if (command !== 'evalsha' && command !== 'eval') return undefined;
  // ioredis sends a script's text (EVAL) on a connection's first use of it; MONITOR shows it escaped.
  const script = SCRIPTS.get(command === 'eval' ? sha1(unescapeMonitor(args[1]!)) : args[1]!);
  if (script === undefined) return undefined;
  const count = Number(args[2]);
  const keys = args.slice(3, 3 + count);
  if (keys[0] !== budgetKey) return undefined;
  return { script, keys, argv: args.slice(3 + count) };
}

/** STEP's ARGV positions (1-based, as in scripts.ts): the run, the charge fields, tool calls, the release, the call, the hold, the wrap mode and its dollars, the attempt. */
const A_COST = 1 + CHARGE_FIELD_NAMES.indexOf('costUsd');
const A_RELEASE = CHARGE_FIELD_NAMES.length + 3;
const A_CALL = A_RELEASE + 1;
const A_HOLD = A_RELEASE + 2;
const A_WRAP = A_RELEASE + 3;
const A_WRAP_USD = A_RELEASE + 4;
const A_ATTEMPT = A_RELEASE + 5;

/** Where a run is in the model's worker: between two of its steps. */
type Phase = 'idle' | 'takeover' | 'calls' | 'lost' | 'ended';

/** What the replay found: each violation in words, and its figures at the end. */
export interface Replay {
  violations: string[];
  spent: number;
  held: number;
  runHeld: Map<string, number>;
  reports: Map<string, number>;
  takeovers: number;
  reservations: number;
  writeOffs: number;
  /** Steps of an attempt below its run's fence (taken over): charged, nothing else. */
  stale: number;
}

/**
 * Replays `trace` through the model's step relation, under a strict cap of `cap` dollars and
 * `retryLostRuns`. Checks each script against the model's worker (a run's steps come between its
 * `begin` and its report; an attempt after the first starts with its takeover, a run begun lost is
 * written off; a step of an attempt below its run's fence only charges), the cap after each step
 * (spent, and spent + held, never past it), and at the end that nothing is held and every run was
 * reported once.
 */
export function replayTrace(trace: readonly TracedScript[], cap: number, retryLostRuns: number): Replay {
  const violations: string[] = [];
  let spent = 0;
  let held = 0;
  const runHeld = new Map<string, number>();
  const runWrap = new Map<string, number>();
  const started = new Map<string, { attempt: number; token: string }>();
  const phase = new Map<string, Phase>();
  const reports = new Map<string, number>();
  let takeovers = 0;
  let reservations = 0;
  let writeOffs = 0;
  let stale = 0;
  const fence = new Map<string, number>();
  const credit = new Map<string, number>();
  const unhold = (run: string, by: number): void => {
    held = Math.max(0, held - by);
    runHeld.set(run, Math.max(0, (runHeld.get(run) ?? 0) - by));
  };
  trace.forEach(({ script, argv }, i) => {
    const run = argv[0]!;
    const at = `#${i} ${script}(run ${run})`;
    switch (script) {
      case 'begin': {
        // BEGIN: done, lost, stopped or run (an attempt more); the same pick-up asking again goes on.
        const prev = started.get(run);
        if (reports.has(run)) return;
        if (prev !== undefined && prev.token === argv[4]) return;
        if (prev !== undefined && prev.attempt > retryLostRuns) {
          phase.set(run, 'lost');
          return;
        }
        if (spent >= cap) return;
        const attempt = (prev?.attempt ?? 0) + 1;
        started.set(run, { attempt, token: argv[4]! });
        phase.set(run, attempt > 1 ? 'takeover' : 'calls');
        return;
      }
      case 'step': {
        const release = Number(argv[A_RELEASE - 1]);
        const attempt =
          argv[A_ATTEMPT - 1] === undefined || argv[A_ATTEMPT - 1] === '' ? NaN : Number(argv[A_ATTEMPT - 1]);
        if (attempt < (fence.get(run) ?? 0)) {
          // The fence: a stale attempt's charge counts, in place of the holds its takeover charged.
          const back = Math.min(release, credit.get(run) ?? 0);
          credit.set(run, (credit.get(run) ?? 0) - back);
          spent += Number(argv[A_COST]) - back;
          stale += 1;
          if (spent > cap + 1e-9) violations.push(`${at}: $${spent} spent, past the cap $${cap}`);
          return;
        }
        const now = phase.get(run) ?? 'idle';
        const call = argv[A_CALL - 1] ?? '';
        const wmode = argv[A_WRAP - 1] ?? '';
        if (now === 'idle' || now === 'ended') violations.push(`${at}: a step of a run not begun, or ended`);
        // An attempt after the first begins by taking the earlier one over: from its records (a
        // drop carrying their charge), or with no store by writing it off.
        if (now === 'takeover' && (call !== '' || (wmode !== WRAP_CODES.drop && wmode !== WRAP_CODES.lost)))
          violations.push(`${at}: an attempt after the first does not begin with its takeover`);
        if (now === 'lost' && wmode !== WRAP_CODES.lost) violations.push(`${at}: a run begun lost is not written off`);
        if (wmode === WRAP_CODES.lost && now !== 'lost' && now !== 'takeover')
          violations.push(`${at}: a write-off of a run neither lost nor taken over`);
        // STEP: the charge, the release, the wrap mode, the reservation under the strict cap. A
        // write-off or a takeover charges the calls' holds instead of the dollars it brings (strict).
        const charge = wmode === WRAP_CODES.lost ? 0 : Number(argv[A_COST]);
        spent += charge;
        if (release > (runHeld.get(run) ?? 0) + 1e-9)
          violations.push(`${at}: lets go of $${release}, more than the run holds ($${runHeld.get(run) ?? 0})`);
        if (release > 0) unhold(run, release);
        const wold = runWrap.get(run) ?? 0;
        if (wmode === WRAP_CODES.drop || wmode === WRAP_CODES.lost) {
          if (wmode === WRAP_CODES.lost) {
            const calls = Math.max(0, (runHeld.get(run) ?? 0) - wold);
            spent += calls;
            credit.set(run, (credit.get(run) ?? 0) + calls);
            if (attempt > (fence.get(run) ?? 0)) fence.set(run, attempt);
            writeOffs += 1;
          }
          runWrap.set(run, 0);
          unhold(run, runHeld.get(run) ?? 0);
          if (now === 'takeover') takeovers += 1;
          phase.set(run, now === 'takeover' ? 'calls' : 'ended');
        }
        if (call === CALL_CODES.llm) {
          const hold = Number(argv[A_HOLD - 1]);
          const wnew =
            wmode === WRAP_CODES.keep
              ? Number(argv[A_WRAP_USD - 1])
              : wmode === WRAP_CODES.final
                ? 0
                : (runWrap.get(run) ?? 0);
          if (spent < cap && spent + held + (wnew - wold) + hold <= cap + 1e-9) {
            held += hold + (wnew - wold);
            runHeld.set(run, (runHeld.get(run) ?? 0) + hold + (wnew - wold));
            runWrap.set(run, wnew);
            reservations += 1;
          }
        }
        if (spent > cap + 1e-9) violations.push(`${at}: $${spent} spent, past the cap $${cap}`);
        if (spent + held > cap + 1e-9) violations.push(`${at}: $${spent} spent + $${held} held, past the cap $${cap}`);
        return;
      }
      case 'record': {
        if (reports.has(run)) return; // HSETNX: a second report is dropped
        // A report of an attempt taken over (a later one began) is refused.
        if (argv[3] !== undefined && Number(argv[3]) < (started.get(run)?.attempt ?? 0)) return;
        reports.set(run, 1);
        phase.set(run, 'ended');
        return;
      }
      case 'skip':
        for (let k = 0; k < argv.length; k += 2) if (!started.has(argv[k]!)) reports.set(argv[k]!, 1);
        return;
    }
  });
  if (held > 1e-9) violations.push(`at the end: $${held} still held`);
  for (const [run, h] of runHeld) if (h > 1e-9) violations.push(`at the end: run ${run} still holds $${h}`);
  return { violations, spent, held, runHeld, reports, takeovers, reservations, writeOffs, stale };
}
