import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import {
  DEFAULT_IDLE_CALLS,
  DEFAULT_SAME_TOOL_CALLS,
  idleCalls,
  repeatedText,
  sameToolCall,
  type StallDetector,
} from '../agent/stall/stallDetectors';

/** A detector as `agent-sm replay --stall` names it, with the detector it stands for. */
export interface StallSpec {
  /** As written: `k=3`, `text`, `idle=8`. */
  readonly spec: string;
  /** `sameToolCall(3)`, `repeatedText()`, `idleCalls(8)`. */
  readonly name: string;
  readonly detector: StallDetector;
}

const EXPECTED =
  'k=N (the same tool call N times, N ≥ 2), text (the same text twice in a row) or idle=N (N calls with no new tool call)';

/**
 * The built-in detectors `--stall` names: `k=3` (or `k`: the default 3) for `sameToolCall`, `text`
 * for `repeatedText`, `idle=8` (or `idle`: the default 8) for `idleCalls`. Throws naming a spec
 * it cannot read. Pure.
 */
export function parseStallSpecs(specs: readonly string[]): StallSpec[] {
  if (!Array.isArray(specs) || specs.length === 0)
    throw new InvalidArgumentError('--stall', `one or more of ${EXPECTED}`, specs);
  return specs.map((spec) => {
    const match = /^(k|text|idle)(?:=(\d+))?$/.exec(typeof spec === 'string' ? spec.trim() : '');
    if (match === null) throw new InvalidArgumentError('--stall', EXPECTED, spec);
    const [, kind, given] = match;
    const n = given === undefined ? undefined : Number(given);
    if (kind === 'text') {
      if (n !== undefined) throw new InvalidArgumentError('--stall', `text without a number (${EXPECTED})`, spec);
      return { spec, name: 'repeatedText()', detector: repeatedText() };
    }
    if (kind === 'k') {
      const k = n ?? DEFAULT_SAME_TOOL_CALLS;
      if (!Number.isSafeInteger(k) || k < 2)
        throw new InvalidArgumentError('--stall', `k=N with N ≥ 2 (${EXPECTED})`, spec);
      return { spec, name: `sameToolCall(${k})`, detector: sameToolCall(k) };
    }
    const idle = n ?? DEFAULT_IDLE_CALLS;
    if (!Number.isSafeInteger(idle) || idle < 1)
      throw new InvalidArgumentError('--stall', `idle=N with N ≥ 1 (${EXPECTED})`, spec);
    return { spec, name: `idleCalls(${idle})`, detector: idleCalls(idle) };
  });
}
