import type { BatchDiff, TaskPair, TaskSide } from '../batch/reading/diffBatches';
import { DIVERGENCE_WORDS, type StepView } from '../history/diffStep';
import type { RunDiff } from '../history/diffRunFiles';
import type { RunSideFacts } from '../history/RunDiffSide';
import { formatChange, formatDelta } from '../internal/formatDelta';
import { formatSpend, formatSpendCell } from '../internal/formatSpend';
import { plural } from '../internal/text';
import { esc, staticPage } from './html';

// Every string from a history file reaches the page through `esc` alone; the page has no script.

const DIFF_STYLE = `
table.side { table-layout: fixed; }
table.side td { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; word-break: break-word; }
table.side .ln { width: 56px; color: var(--muted); text-align: right; }
table.side tr.cause td { background: #fff3e0; }
table.side tr.diverge td { background: #fdecec; }
table.side tr.before td { color: var(--muted); }
table.side details summary { cursor: pointer; }
td.gone { color: var(--muted); font-style: italic; }
`;

/**
 * The page of `agent-sm diff <a> <b> --html FILE` for two runs: where they first diverge and
 * how, the fields that differ, the two runs side by side from the divergence on (each step
 * opens to its line), and the figures A → B. Pure; self-contained, no script.
 */
export function renderRunDiffPage(diff: RunDiff): string {
  const { a, b, divergence } = diff;
  const out: string[] = [];
  const badge =
    divergence === undefined ? '<span class="badge ok">same</span>' : '<span class="badge failed">differ</span>';
  out.push(`<header><h1>Diff ${badge}</h1>`);
  out.push(`<p class="sub">A: ${esc(a.name)}</p><p class="sub">B: ${esc(b.name)}</p></header>`);
  if (divergence === undefined) {
    out.push(
      `<div class="panel ok" id="verdict"><strong>The runs took the same ${esc(plural(diff.sameSteps, 'step'))}</strong> (timestamps, durations and run ids aside).</div>`,
    );
  } else {
    out.push('<div class="panel failure" id="verdict">');
    out.push(
      `<strong>First difference at step ${diff.sameSteps + 1}: ${esc(DIVERGENCE_WORDS[divergence.kind])}</strong>`,
    );
    out.push('<dl>');
    out.push(
      `<dt>A</dt><dd>${divergence.a === undefined ? 'ends here' : esc(`line ${divergence.a.line}: ${divergence.a.text}`)}</dd>`,
    );
    out.push(
      `<dt>B</dt><dd>${divergence.b === undefined ? 'ends here' : esc(`line ${divergence.b.line}: ${divergence.b.text}`)}</dd>`,
    );
    out.push('</dl>');
    if (divergence.fields.length > 0) {
      out.push('<table id="fields"><thead><tr><th>Field</th><th>A</th><th>B</th></tr></thead><tbody>');
      for (const f of divergence.fields)
        out.push(`<tr><td>${esc(f.path)}</td><td class="data">${esc(f.a)}</td><td class="data">${esc(f.b)}</td></tr>`);
      out.push('</tbody></table>');
    }
    const { cause } = divergence;
    if (cause !== undefined) {
      out.push('<p id="cause"><strong>Why: the same move, after</strong></p><dl>');
      out.push(`<dt>A</dt><dd>${esc(`line ${cause.a.line}: ${cause.a.text}`)}</dd>`);
      out.push(`<dt>B</dt><dd>${esc(`line ${cause.b.line}: ${cause.b.text}`)}</dd></dl>`);
      out.push('<table id="cause-fields"><thead><tr><th>Field</th><th>A</th><th>B</th></tr></thead><tbody>');
      for (const f of cause.fields)
        out.push(`<tr><td>${esc(f.path)}</td><td class="data">${esc(f.a)}</td><td class="data">${esc(f.b)}</td></tr>`);
      out.push('</tbody></table>');
    }
    out.push('</div>');
    out.push('<h2>Side by side, from the divergence on</h2>');
    out.push('<table class="side" id="side"><thead><tr>');
    out.push(`<th class="ln">line</th><th>A: ${esc(a.name)}</th><th class="ln">line</th><th>B: ${esc(b.name)}</th>`);
    out.push('</tr></thead><tbody>');
    for (const step of diff.before) out.push(`<tr class="before">${cell(step)}${cell(step, 'alike')}</tr>`);
    const rows = Math.max(diff.afterA.length, diff.afterB.length);
    // The diverging steps, and the journal lines that say why (when the same move differs in its details).
    const causeAt =
      divergence.cause === undefined ? -1 : diff.afterA.findIndex((s) => s.line === divergence.cause!.a.line);
    for (let i = 0; i < rows; i++) {
      const mark = i === 0 ? ' class="diverge"' : i === causeAt ? ' class="cause"' : '';
      out.push(`<tr${mark}>${cell(diff.afterA[i])}${cell(diff.afterB[i])}</tr>`);
    }
    out.push('</tbody></table>');
    out.push(
      `<p class="hint">${esc(`${plural(diff.sameSteps, 'step')} alike before the divergence (the last ${diff.before.length} shown, greyed); the divergence in red${divergence.cause === undefined ? '' : ', the line that says why in orange'}; each side shows at most ${plural(200, 'step')} from it.`)}</p>`,
    );
  }
  out.push('<h2>A → B</h2>', figures(a, b));
  return staticPage(`Diff: ${a.name} and ${b.name}`, out.join('\n'), DIFF_STYLE);
}

/** A step's two cells: its line, and what it says (opening to the line itself). */
function cell(step: StepView | undefined, alike?: 'alike'): string {
  if (step === undefined) return '<td class="ln"></td><td class="gone">(ended)</td>';
  if (alike !== undefined) return '<td class="ln"></td><td class="gone">alike</td>';
  return `<td class="ln">${step.line}</td><td><details><summary>${esc(step.text)}</summary><pre>${esc(step.detail)}</pre></details></td>`;
}

function figures(a: RunSideFacts, b: RunSideFacts): string {
  const fa = a.facts;
  const fb = b.facts;
  const billed = (f: typeof fa): number => Math.max(0, f.costUsd - f.uncertainUsd);
  const rows: Array<[string, string]> = [
    [
      'outcome',
      `${fa.outcome}${fa.reason === undefined ? '' : `: ${fa.reason}`} → ${fb.outcome}${fb.reason === undefined ? '' : `: ${fb.reason}`}`,
    ],
    ['LLM calls', formatDelta((fa.usage ?? NO_CALLS).llmCalls, (fb.usage ?? NO_CALLS).llmCalls, 'count')],
    ['tool calls', formatDelta((fa.usage ?? NO_CALLS).toolCalls, (fb.usage ?? NO_CALLS).toolCalls, 'count')],
    ['input tokens', formatDelta((fa.usage ?? NO_CALLS).inputTokens, (fb.usage ?? NO_CALLS).inputTokens, 'count')],
    ['output tokens', formatDelta((fa.usage ?? NO_CALLS).outputTokens, (fb.usage ?? NO_CALLS).outputTokens, 'count')],
    ['money A', formatSpend(fa)],
    ['money B', formatSpend(fb)],
    ['billed', formatDelta(billed(fa), billed(fb), 'usd')],
    ['uncertain', formatDelta(fa.uncertainUsd, fb.uncertainUsd, 'usd')],
    ['released', formatDelta(fa.releasedUsd, fb.releasedUsd, 'usd')],
    ['wall time', formatDelta(fa.durationMs, fb.durationMs, 'ms')],
  ];
  const states = [...new Set([...Object.keys(a.timePerState), ...Object.keys(b.timePerState)])];
  for (const state of states)
    rows.push([`time in ${state}`, formatDelta(a.timePerState[state] ?? 0, b.timePerState[state] ?? 0, 'ms')]);
  return `<table id="figures"><tbody>${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('')}</tbody></table>`;
}

/**
 * The page of `agent-sm diff <folderA> <folderB> --html FILE`: regressions with both reasons,
 * improvements, the other changed tasks by cost change, tasks of one side alone, the totals.
 * Pure; self-contained, no script.
 */
export function renderBatchDiffPage(diff: BatchDiff): string {
  const { a, b } = diff;
  const out: string[] = [];
  const badge = diff.same ? '<span class="badge ok">same</span>' : '<span class="badge failed">differ</span>';
  out.push(`<header><h1>Batch diff ${badge}</h1>`);
  out.push(`<p class="sub">A: ${esc(a.where)}</p><p class="sub">B: ${esc(b.where)}</p></header>`);
  const pairs = (id: string, title: string, list: readonly TaskPair[]): void => {
    if (list.length === 0) return;
    out.push(`<h2>${esc(title)} (${list.length})</h2>`, `<table id="${id}"><thead><tr>`);
    out.push(
      '<th>task</th><th>outcome A → B</th><th>cost A → B</th><th>LLM calls</th><th>tokens</th><th>reason A</th><th>reason B</th>',
    );
    out.push('</tr></thead><tbody>');
    for (const p of list)
      out.push(
        `<tr class="o-${esc(p.b.outcome)}"><td>${esc(p.id)}</td><td>${esc(`${p.a.outcome} → ${p.b.outcome}`)}</td>` +
          `<td class="num">${esc(`${formatSpendCell(p.a)} → ${formatSpendCell(p.b)} (${formatChange(p.costDeltaUsd, 'usd')})`)}</td>` +
          `<td class="num">${esc(formatChange(p.llmCallsDelta, 'count'))}</td><td class="num">${esc(formatChange(p.tokensDelta, 'count'))}</td>` +
          `<td>${esc(p.a.reason ?? p.a.outcome)}</td><td>${esc(p.b.reason ?? p.b.outcome)}</td></tr>`,
      );
    out.push('</tbody></table>');
  };
  if (diff.same) out.push('<div class="all-well">The two batches ran every task alike (time aside).</div>');
  pairs('regressions', 'Regressions: ended well in A, not in B', diff.regressions);
  pairs('improvements', 'Improvements: failed in A, ended well in B', diff.improvements);
  pairs('changed', 'Changed, largest cost change first', diff.changed);
  const alone = (id: string, title: string, list: ReadonlyArray<{ id: string } & TaskSide>): void => {
    if (list.length === 0) return;
    out.push(`<h2>${esc(title)} (${list.length})</h2>`, `<table id="${id}"><tbody>`);
    for (const r of list)
      out.push(
        `<tr><td>${esc(r.id)}</td><td>${esc(r.outcome)}</td><td class="num">${esc(formatSpendCell(r))}</td><td>${esc(r.reason ?? '')}</td></tr>`,
      );
    out.push('</tbody></table>');
  };
  alone('only-a', 'Only in A', diff.onlyA);
  alone('only-b', 'Only in B', diff.onlyB);
  const ta = a.totals;
  const tb = b.totals;
  const rows: Array<[string, string]> = [
    ['runs', formatDelta(ta.runs, tb.runs, 'count')],
    ['ended well', formatDelta(ta.succeeded, tb.succeeded, 'count')],
    ['LLM calls', formatDelta(ta.llmCalls, tb.llmCalls, 'count')],
    ['tokens', formatDelta(ta.inputTokens + ta.outputTokens, tb.inputTokens + tb.outputTokens, 'count')],
    ['money A', formatSpend(ta)],
    ['money B', formatSpend(tb)],
    ['charged', formatDelta(ta.costUsd, tb.costUsd, 'usd')],
    ['wall time (added up)', formatDelta(ta.durationMs, tb.durationMs, 'ms')],
  ];
  out.push('<h2>Totals A → B</h2>');
  out.push(
    `<table id="totals"><tbody>${rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('')}</tbody></table>`,
  );
  return staticPage(`Batch diff: ${a.where} and ${b.where}`, out.join('\n'), DIFF_STYLE);
}

/** The counts of a run whose file records no usage: it made no call, so they are zero, not unknown. */
const NO_CALLS = { llmCalls: 0, toolCalls: 0, inputTokens: 0, outputTokens: 0 } as const;
