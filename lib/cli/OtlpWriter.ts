import * as fs from 'node:fs';
import { escapeJsonText } from '../internal/escapeControl';
import { messageOf } from '../internal/messageOf';
import type { OtlpSpan } from '../telemetry/OtlpJson';
import type { HistoryToOtlpOptions } from '../telemetry/OtlpSpanStream';
import { otlpResource } from '../telemetry/historyToOtlp';

/** Output is written in pieces of about this many characters: the most it holds at once. */
const PIECE_CHARS = 1024 * 1024;

/**
 * Writes one OTLP/JSON export (`{"resourceSpans":[…]}`) span by span, as `OtlpSpanStream`
 * completes them, to a function (standard output) or a file, holding at most about a
 * megabyte of text: the export of any file takes bounded memory. Each span is one line. The
 * writes are synchronous (a file; standard output to a file, pipe or terminal on Linux), so
 * output never piles up in memory behind a slow reader. `abort()` removes a half-written file.
 */
export class OtlpWriter {
  #spans = 0;
  #text: string;
  readonly #tail: string;
  readonly #write: (text: string) => void;
  readonly #fd: number | undefined;
  readonly #path: string | undefined;

  constructor(options: Pick<HistoryToOtlpOptions, 'serviceName'>, target: string | ((text: string) => void)) {
    const envelope = escapeJsonText(JSON.stringify({ resourceSpans: [otlpResource(options, [])] }));
    const at = envelope.lastIndexOf('"spans":[]') + '"spans":['.length;
    this.#text = `${envelope.slice(0, at)}\n`;
    this.#tail = `\n${envelope.slice(at)}\n`;
    if (typeof target === 'function') this.#write = target;
    else {
      let fd: number;
      try {
        fd = fs.openSync(target, 'w');
      } catch (error) {
        throw new Error(`cannot write the export to ${target}: ${messageOf(error)}`, { cause: error });
      }
      this.#fd = fd;
      this.#path = target;
      this.#write = (text) => {
        const bytes = Buffer.from(text, 'utf8');
        for (let off = 0; off < bytes.length;) off += fs.writeSync(fd, bytes, off);
      };
    }
  }

  /** Spans written so far. */
  get spans(): number {
    return this.#spans;
  }

  span(span: OtlpSpan): void {
    // The characters JSON leaves raw (DEL, C1, bidi controls) escaped as every reader escapes them:
    // the same strings to a collector, inert on a terminal.
    this.#text += `${this.#spans === 0 ? '' : ',\n'}${escapeJsonText(JSON.stringify(span))}`;
    this.#spans++;
    if (this.#text.length >= PIECE_CHARS) this.#flush();
  }

  end(): void {
    this.#text += this.#tail;
    this.#flush();
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
  }

  /** After a failure: a file is closed and removed, so no half an export is left as if whole. */
  abort(): void {
    if (this.#fd === undefined) return;
    try {
      fs.closeSync(this.#fd);
      fs.rmSync(this.#path!, { force: true });
    } catch {
      // The failure being reported matters more than the cleanup's.
    }
  }

  #flush(): void {
    const text = this.#text;
    this.#text = '';
    this.#write(text);
  }
}
