import { DIVERGENCE_WORDS, type StepView } from '../history/diffStep';
import type { RunDiff } from '../history/diffRunFiles';
import type { RunSideFacts } from '../history/RunDiffSide';
import { escapeControl } from '../internal/escapeControl';
import { formatSpend } from '../internal/formatSpend';
import { cut, oneLine, plural } from '../internal/text';
import { formatDelta } from '../internal/formatDelta';

/** Steps of each run shown after the divergence in text (the HTML page shows more). */
const THEN_STEPS = 6;

/**
 * What `agent-sm diff <a> <b>` prints for two runs: same or where they first differ (the kind,
 * each run's line there, the fields that differ, the steps alike before it and each run's next
 * steps), then the changes from A to B: outcome, calls, tokens, money (billed, uncertain,
 * released apart), wall time, time per state. Every value from the files is escaped. Pure.
 */
export function formatRunDiff(diff: RunDiff): string {
  const { a, b, divergence } = diff;
  const out: string[] = [];
  if (divergence === undefined) {
    out.push(
      `Same: ${a.name} and ${b.name} took the same ${plural(diff.sameSteps, 'step')} (timestamps, durations and run ids aside)`,
    );
  } else {
    const at = divergence.a ?? divergence.b!;
    out.push(
      `Differ: ${a.name} and ${b.name} first differ at step ${diff.sameSteps + 1} (seq ${at.seq}): ${DIVERGENCE_WORDS[divergence.kind]}`,
    );
    out.push(
      '',
      diff.sameSteps === 0
        ? 'Alike before it: nothing'
        : `Alike before it: ${plural(diff.sameSteps, 'step')}${diff.sameSteps > diff.before.length ? ` (the last ${diff.before.length} shown)` : ''}`,
    );
    for (const step of diff.before) out.push(`    ${stepLine(step)}`);
    out.push('', 'Where they diverge');
    out.push(`  A ${divergence.a === undefined ? `(${a.name} ends here)` : stepLine(divergence.a)}`);
    out.push(`  B ${divergence.b === undefined ? `(${b.name} ends here)` : stepLine(divergence.b)}`);
    if (divergence.fields.length > 0) {
      out.push('  Fields that differ');
      for (const field of divergence.fields) {
        out.push(`    ${field.path}`);
        out.push(`      A ${oneLine(field.a)}`);
        out.push(`      B ${oneLine(field.b)}`);
      }
    }
    const { cause } = divergence;
    if (cause !== undefined) {
      out.push('  Why: the same move, after');
      out.push(`  A ${stepLine(cause.a)}`);
      out.push(`  B ${stepLine(cause.b)}`);
      for (const field of cause.fields) {
        out.push(`    ${field.path}`);
        out.push(`      A ${oneLine(field.a)}`);
        out.push(`      B ${oneLine(field.b)}`);
      }
    }
    for (const [side, steps] of [
      ['A', diff.afterA],
      ['B', diff.afterB],
    ] as const) {
      const next = steps.slice(1, 1 + THEN_STEPS);
      if (next.length === 0) continue;
      out.push('', `Then ${side}`);
      for (const step of next) out.push(`    ${stepLine(step)}`);
      const more = steps.length - 1 - next.length;
      if (more > 0)
        out.push(
          `    … (${more} more kept${steps.length >= 200 ? ', and maybe more in the file' : ''}; --html shows them)`,
        );
    }
  }
  out.push('', 'A → B');
  out.push(...sideDeltas(a, b));
  return `${out.map(escapeControl).join('\n')}\n`;
}

/** A step on one line: its line in the file and what it says. */
function stepLine(step: StepView): string {
  return `line ${step.line}  ${oneLine(step.text)}`;
}

/** The figures of two runs, A then B and the change. */
function sideDeltas(a: RunSideFacts, b: RunSideFacts): string[] {
  const fa = a.facts;
  const fb = b.facts;
  // A run whose file records no usage made no call: its counts are zero, not unknown.
  const ua = fa.usage ?? NO_CALLS;
  const ub = fb.usage ?? NO_CALLS;
  const out: string[] = [];
  const reason = (r: string | undefined): string => (r === undefined ? '' : `: ${cut(oneLine(r), 200)}`);
  const outcome =
    fa.outcome === fb.outcome && fa.reason === fb.reason
      ? `${fa.outcome}${reason(fa.reason)} (both)`
      : `${fa.outcome}${reason(fa.reason)} → ${fb.outcome}${reason(fb.reason)}`;
  out.push(`  outcome        ${outcome}`);
  out.push(`  LLM calls      ${formatDelta(ua.llmCalls, ub.llmCalls, 'count')}`);
  out.push(`  tool calls     ${formatDelta(ua.toolCalls, ub.toolCalls, 'count')}`);
  out.push(`  input tokens   ${formatDelta(ua.inputTokens, ub.inputTokens, 'count')}`);
  out.push(`  output tokens  ${formatDelta(ua.outputTokens, ub.outputTokens, 'count')}`);
  out.push(`  money A        ${formatSpend(fa)}`);
  out.push(`  money B        ${formatSpend(fb)}`);
  const billed = (f: typeof fa): number => Math.max(0, f.costUsd - f.uncertainUsd);
  out.push(`  billed         ${formatDelta(billed(fa), billed(fb), 'usd')}`);
  out.push(`  uncertain      ${formatDelta(fa.uncertainUsd, fb.uncertainUsd, 'usd')}`);
  out.push(`  released       ${formatDelta(fa.releasedUsd, fb.releasedUsd, 'usd')}`);
  out.push(`  wall time      ${formatDelta(fa.durationMs, fb.durationMs, 'ms')}`);
  if (a.version !== b.version)
    out.push(`  written by     ${a.version ?? '(no meta line)'} → ${b.version ?? '(no meta line)'}`);
  const states = [...new Set([...Object.keys(a.timePerState), ...Object.keys(b.timePerState)])];
  if (states.length > 0) {
    out.push('', 'Time per state (A → B)');
    const width = Math.min(40, Math.max(...states.map((s) => s.length)));
    for (const state of states)
      out.push(
        `  ${state.padEnd(width)}  ${formatDelta(a.timePerState[state] ?? 0, b.timePerState[state] ?? 0, 'ms')}`,
      );
  }
  return out;
}

/** The counts of a run that made no call. */
const NO_CALLS = { llmCalls: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 } as const;
