import type { HistoryEntry, JournalLineRead } from './HistoryEntry';
import { isHookLine } from '../internal/isHookLine';
import { escapeControl } from '../internal/escapeControl';
import { formatUsd } from '../internal/formatUsd';
import { safeStringify } from '../internal/safeStringify';

/** Options of `formatConversation`: which part of the run, and how much of long content. */
export interface FormatConversationOptions {
  /** Only this turn. */
  turn?: number;
  /** Only what move `seq` followed from: the LLM attempts and tool calls written just before it. */
  seq?: number;
  /** Characters of each piece of content shown before it is folded; `Infinity` unfolds all. Default 600. */
  foldChars?: number;
  /** Lines of each piece of content shown before it is folded. Default 12. */
  foldLines?: number;
}

/**
 * A run's conversation from its journal, for the terminal: per turn, the user's message, each
 * LLM attempt (the model's text, the tool calls it asked for with their inputs, its cost, or
 * the error it failed with) and each tool call's result, each marked with the move it came
 * before. Long content is folded (`foldChars`, `foldLines`) with a note of what was left out.
 * Every string from the file is escaped: no control character reaches the terminal. Journal
 * lines of kinds it does not know are passed over. Pure; `ConversationFormatter` is the same,
 * a line at a time.
 */
export function formatConversation(entries: Iterable<HistoryEntry>, options: FormatConversationOptions = {}): string {
  const formatter = new ConversationFormatter(options);
  const out: string[] = [];
  for (const entry of entries) out.push(...formatter.add(entry));
  out.push(...formatter.end());
  return out.join('\n');
}

/**
 * `formatConversation` for a file read a line at a time (`agent-sm show`): `add` gives the
 * lines an entry makes, so a reader can print them and let the entry go, and `end` the note
 * to print when nothing was shown. Holds nothing of the entries.
 */
export class ConversationFormatter {
  readonly #turn: number | undefined;
  readonly #seq: number | undefined;
  readonly #fold: Fold;
  #lastTurn: number | undefined;
  #shown = 0;

  constructor(options: FormatConversationOptions = {}) {
    const { turn, seq, foldChars = 600, foldLines = 12 } = options;
    this.#turn = turn;
    this.#seq = seq;
    this.#fold = (text, indent) => foldText(text, indent, foldChars, foldLines);
  }

  /** The lines `entry` adds to the conversation (none for what is not shown). */
  add(entry: HistoryEntry): string[] {
    if (entry.kind !== 'journal') return [];
    const j = entry.journal;
    if (j.type !== 'llm' && j.type !== 'tool') return [];
    if (this.#turn !== undefined && j.turn !== this.#turn) return [];
    if (this.#seq !== undefined && j.seq !== this.#seq - 1) return [];
    const out: string[] = [];
    if (j.turn !== this.#lastTurn) {
      if (this.#lastTurn !== undefined) out.push('');
      out.push(`Turn ${j.turn}`);
      this.#lastTurn = j.turn;
    }
    this.#shown++;
    const before = `before move ${j.seq + 1}`;
    out.push(...(j.type === 'llm' ? llmLines(j, before, this.#fold) : toolLines(j, before, this.#fold)));
    return out;
  }

  /** After the last entry: what to say when nothing was shown, else nothing. */
  end(): string[] {
    if (this.#shown > 0) return [];
    const which = [
      this.#turn === undefined ? '' : `turn ${this.#turn}`,
      this.#seq === undefined ? '' : `move ${this.#seq}`,
    ]
      .filter(Boolean)
      .join(', ');
    return [
      which === ''
        ? '(no conversation: the file has no journal; write it with journal: true)'
        : `(nothing was said in ${which})`,
    ];
  }
}

type Fold = (text: string, indent: string) => string;

function llmLines(j: JournalLineRead, before: string, fold: Fold): string[] {
  const lines: string[] = [];
  const input = asObject(j['input']);
  // The user's message opens a call; retries send it again, so it is shown once.
  if (j.attempt === 1 && input?.['kind'] === 'user_message')
    lines.push(`  user (${before}):`, fold(text(input['message']), '    '));
  // A hook's call through its budgeted handle: its ledger line holds what it cost, no content.
  if (isHookLine(j)) return [`  ${String(j.operation)}: LLM call ${j.attempt ?? '?'}${moneyOf(j)} (${before})`];
  const head = `  model, attempt ${j.attempt ?? '?'}${moneyOf(j)} (${before})`;
  const error = asObject(j['error']);
  if (error !== undefined) {
    lines.push(`${head}: FAILED ${escapeControl(text(error['name']))}: ${escapeControl(text(error['message']))}`);
    return lines;
  }
  const response = asObject(j['response']);
  if (typeof j['dropped'] === 'string') {
    lines.push(`${head}: ${escapeControl(j['dropped'])}`);
    return lines;
  }
  const model = typeof response?.['model'] === 'string' ? ` ${escapeControl(response['model'])}` : '';
  lines.push(`${head}${model}:`);
  if (typeof response?.['text'] === 'string' && response['text'] !== '') lines.push(fold(response['text'], '    '));
  const calls = Array.isArray(response?.['toolCalls']) ? (response['toolCalls'] as unknown[]) : [];
  for (const raw of calls) {
    const call = asObject(raw);
    lines.push(`    → ${escapeControl(text(call?.['name']))} (${escapeControl(text(call?.['id']))})`);
    if (call?.['input'] !== undefined) lines.push(fold(safeStringify(call['input']), '        '));
  }
  return lines;
}

/**
 * What an LLM attempt's line says it was charged, the figures apart: `, $0.0006` billed;
 * `, $0.0100 uncertain (why)` when charged at its hold (it may have been billed, no usage came
 * back); `, $0.0100 released (why)` when its hold was let go (not billed); `, cost unknown (why)`
 * when nothing priced or held it.
 */
function moneyOf(j: JournalLineRead): string {
  const cost = typeof j['costUsd'] === 'number' ? formatUsd(j['costUsd']) : undefined;
  const held = j['chargedAtHold'];
  if (cost !== undefined && typeof held === 'string')
    return `, ${cost} uncertain (${escapeControl(held.replace(/^charged at its hold: /, ''))})`;
  const released = j['released'];
  if (typeof released === 'string') {
    const usd = typeof j['releasedUsd'] === 'number' ? ` ${formatUsd(j['releasedUsd'])}` : '';
    return `${cost === undefined ? '' : `, ${cost}`},${usd} released (${escapeControl(released)})`;
  }
  const unpriced = j['unpriced'];
  // A failed attempt's line says its failure after the money: why its cost is unknown would repeat it.
  if (cost === undefined && typeof unpriced === 'string')
    return j['error'] === undefined ? `, cost unknown (${escapeControl(unpriced)})` : ', cost unknown';
  return cost === undefined ? '' : `, ${cost}`;
}

function toolLines(j: JournalLineRead, before: string, fold: Fold): string[] {
  const call = j.call;
  const result = asObject(j['result']);
  const head = `  tool ${escapeControl(text(call?.name))} (${escapeControl(text(call?.id))}) ${escapeControl(text(j.status))} (${before})`;
  if (typeof j['dropped'] === 'string') return [`${head}: ${escapeControl(j['dropped'])}`];
  const lines = [`${head}:`];
  lines.push(
    fold(typeof result?.['output'] === 'string' ? result['output'] : safeStringify(j['result'] ?? ''), '    '),
  );
  return lines;
}

/** `text` indented, each line escaped, cut to `chars` characters and `maxLines` lines with a note of the rest. */
export function foldText(value: string, indent: string, chars: number, maxLines: number): string {
  let shown = value.length > chars ? value.slice(0, chars) : value;
  let lines = shown.split('\n');
  if (lines.length > maxLines) {
    lines = lines.slice(0, maxLines);
    shown = lines.join('\n');
  }
  const body = lines.map((line) => `${indent}${escapeControl(line)}`).join('\n');
  const left = value.length - shown.length;
  return left > 0
    ? `${body}\n${indent}… ${left.toLocaleString('en-US')} more characters folded (agent-sm show --full shows them)`
    : body;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined ? '?' : safeStringify(value);
}

/**
 * What was said before each move, as `formatConversation` prints it: for each move that
 * followed journal lines (its seq), their text. `maxChars` caps the text kept in all (the
 * rest of the moves get none and `truncated` says so), so a page that embeds it stays small.
 */
export function conversationByMove(
  entries: Iterable<HistoryEntry>,
  options: { foldChars?: number; foldLines?: number; maxChars?: number } = {},
): { bySeq: Map<number, string>; truncated: boolean } {
  const collector = new MoveConversations(options);
  for (const entry of entries) collector.add(entry);
  return collector.result();
}

/** `conversationByMove` an entry at a time: it keeps the text of one move's lines while they come, then its folded text. */
export class MoveConversations {
  readonly #options: { foldChars: number; foldLines: number };
  readonly #maxChars: number;
  readonly #bySeq = new Map<number, string>();
  #total = 0;
  #truncated = false;
  /** The move whose journal lines are coming, and their lines so far. */
  #seq: number | undefined;
  #formatter: ConversationFormatter | undefined;
  #lines: string[] = [];

  constructor({ foldChars = 2000, foldLines = 40, maxChars = 200_000 } = {}) {
    this.#options = { foldChars, foldLines };
    this.#maxChars = maxChars;
  }

  add(entry: HistoryEntry): void {
    if (this.#truncated) return;
    if (entry.kind !== 'journal' || (entry.journal.type !== 'llm' && entry.journal.type !== 'tool')) return;
    const seq = entry.journal.seq + 1;
    // A move's journal lines come together, before it: a new seq closes the last one's.
    if (seq !== this.#seq) {
      this.#flush();
      if (this.#truncated) return;
      this.#seq = seq;
      this.#formatter = new ConversationFormatter(this.#options);
    }
    this.#lines.push(...this.#formatter!.add(entry));
  }

  result(): { bySeq: Map<number, string>; truncated: boolean } {
    this.#flush();
    return { bySeq: this.#bySeq, truncated: this.#truncated };
  }

  #flush(): void {
    if (this.#seq === undefined || this.#formatter === undefined) return;
    const text = [...this.#lines, ...this.#formatter.end()].join('\n');
    this.#lines = [];
    const seq = this.#seq;
    this.#seq = undefined;
    this.#formatter = undefined;
    if (this.#total + text.length > this.#maxChars) {
      this.#truncated = true;
      return;
    }
    this.#total += text.length;
    this.#bySeq.set(seq, text);
  }
}
