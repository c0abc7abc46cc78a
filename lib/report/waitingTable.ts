import { escapeControl } from '../internal/escapeControl';
import { cut, plural } from '../internal/text';
import { esc } from './html';

/** A tool call a run of a batch page waits on for a person's answer (its history ends in AwaitingApproval). */
export interface BatchPageWaitingCall {
  readonly id: string;
  readonly callId: string;
  readonly tool: string;
  /** The call's input as the LLM gave it; undefined when it gave none. User data: escaped on the page. */
  readonly input: unknown;
  /** When the wait began, epoch milliseconds. */
  readonly since: number;
  /** Its row in the runs table (`#run-<row>` opens its page); -1 for none. */
  readonly row: number;
}

/** Characters of a call's input shown. */
const INPUT_CHARS = 300;

/** The waiting calls of a history's AwaitingApproval move (`summary.waiting.requests`), as the page lists them. */
export function waitingCalls(
  id: string,
  row: number,
  waiting: { readonly state: string; readonly at: number; readonly requests: readonly unknown[] } | undefined,
): BatchPageWaitingCall[] {
  if (waiting === undefined || waiting.state !== 'AwaitingApproval') return [];
  const calls: BatchPageWaitingCall[] = [];
  for (const request of waiting.requests) {
    const r = request as { callId?: unknown; name?: unknown; input?: unknown };
    if (typeof r.callId !== 'string' || typeof r.name !== 'string') continue;
    calls.push({ id, callId: r.callId, tool: r.name, input: r.input, since: waiting.at, row });
  }
  return calls;
}

/**
 * The table that heads a batch page when runs wait for approval: each waiting call with its
 * run, tool, input and since when, and how to answer it from the terminal. Nothing when none
 * waits. Pure.
 */
export function waitingTable(calls: readonly BatchPageWaitingCall[], source: string | undefined): string {
  if (calls.length === 0) return '';
  const rows = calls.map((c) => {
    // Control and bidi characters shown escaped, as every reader shows them: an id or input cannot pass for another.
    const show = (text: string): string => esc(escapeControl(text));
    const id = c.row >= 0 ? `<a href="#run-${c.row}">${show(c.id)}</a>` : show(c.id);
    const input = c.input === undefined ? '' : cut(JSON.stringify(c.input) ?? '', INPUT_CHARS);
    return `<tr><td>${id}</td><td>${show(c.callId)}</td><td>${show(c.tool)}</td><td class="reason"><code>${show(input)}</code></td><td>${esc(new Date(c.since).toISOString())}</td></tr>`;
  });
  const where = escapeControl(source ?? '<folder>');
  return [
    `<h2>Waiting for approval <span class="count" id="waiting-count">${esc(plural(calls.length, 'call'))}</span></h2>`,
    `<p class="hint">${esc(`Answer with agent-sm approve ${where} <run> [<callId>] or agent-sm deny ${where} <run> [<callId>] --reason TEXT.`)}</p>`,
    '<table id="waiting"><thead><tr><th>run</th><th>call</th><th>tool</th><th>input</th><th>waiting since</th></tr></thead>',
    `<tbody>${rows.join('')}</tbody></table>`,
  ].join('');
}
