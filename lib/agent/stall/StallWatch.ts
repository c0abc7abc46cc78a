import type { JournalEntry } from '../journal/JournalEntry';
import type { ResolvedStall, StallPolicy } from './StallOptions';
import type { StallFinding } from './stallDetectors';
import { OperationError, StalledError } from '../TurnError';

/** What the watch found after a response: nothing, a stall and what to do about it, or a detector that threw. */
export type StallCheck =
  | {
      kind: 'stalled';
      finding: StallFinding;
      /** 1 for the run's first firing. */
      firing: number;
      policy: StallPolicy;
      /** The move into Stalled: its description and data (the detector, its evidence, the policy). */
      event: { description: string; data: Record<string, unknown> };
      /** With `nudge`: the message sent to the model with the next tool results. */
      nudge?: string;
      /** With `stop`: the turn's error. */
      error?: StalledError;
    }
  | { kind: 'threw'; error: OperationError };

/**
 * Watches one adapter's run for stalls: it keeps the run's journal in memory (the entries the
 * turn journals, whether or not the journal is written) and, after each response, asks the
 * detectors about it. Counts the firings, so that the policy can differ by firing.
 */
export class StallWatch {
  readonly #stall: ResolvedStall;
  readonly #journal: JournalEntry[] = [];
  #firings = 0;

  constructor(stall: ResolvedStall) {
    this.#stall = stall;
  }

  /** The journal function a turn writes through: it keeps each entry, then hands it to `write` when the journal is on. */
  tee(write: ((entry: JournalEntry) => void) | undefined): (entry: JournalEntry) => void {
    const kept = this.#journal;
    return write === undefined ? (entry) => void kept.push(entry) : (entry) => (kept.push(entry), write(entry));
  }

  /** Asks each detector, in order, about the journal so far; the first finding counts. */
  check(): StallCheck | undefined {
    for (const [i, detector] of this.#stall.detectors.entries()) {
      let finding;
      try {
        finding = detector(this.#journal);
      } catch (error) {
        return { kind: 'threw', error: new OperationError(`stall detector ${i}`, error) };
      }
      if (finding === undefined || finding === null) continue;
      if (!isFinding(finding))
        return {
          kind: 'threw',
          error: new OperationError(
            `stall detector ${i}`,
            new Error(`returned ${safeText(finding)}, not { detector, reason, evidence } or undefined`),
          ),
        };
      this.#firings += 1;
      const { policy: policies } = this.#stall;
      const policy = policies[Math.min(this.#firings, policies.length) - 1]!;
      const data = {
        stall: { detector: finding.detector, reason: finding.reason, evidence: finding.evidence },
        firing: this.#firings,
        policy,
      };
      const description = `stalled (${finding.detector}): ${finding.reason}`;
      if (policy === 'stop')
        return {
          kind: 'stalled',
          finding,
          firing: this.#firings,
          policy,
          event: { description, data },
          error: new StalledError(finding),
        };
      const nudge = nudgeMessage(finding);
      return {
        kind: 'stalled',
        finding,
        firing: this.#firings,
        policy,
        event: { description: `${description}: nudging the model`, data: { ...data, nudge } },
        nudge,
      };
    }
    return undefined;
  }
}

/** The one message a nudge sends: what the model repeats, and that it should not. */
export function nudgeMessage(finding: StallFinding): string {
  return `You seem to be stuck: you ${finding.reason}. Doing it again will not help. Try a different approach, or stop and answer with what you have.`;
}

function isFinding(value: unknown): value is StallFinding {
  if (typeof value !== 'object' || value === null) return false;
  const f = value as StallFinding;
  return (
    typeof f.detector === 'string' &&
    typeof f.reason === 'string' &&
    typeof f.evidence === 'object' &&
    f.evidence !== null
  );
}

function safeText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
