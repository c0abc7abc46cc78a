import type { StateName } from '../../../states/StateName';
import type { BillingRule } from '../money/providerBilling';
import { GraceGroup } from '../../internal/GraceGroup';
import type { Settled } from '../../internal/settleWithGrace';
import type { Sleep } from '../../internal/sleep';
import type { StateMachine } from '../../machine/StateMachine';
import type { AgentEvents } from '../AgentEvents';
import type { AgentLogger } from '../AgentLogger';
import type { ApprovalPolicy } from '../ApprovalGate';
import type {
  AgentLoop,
  BudgetedLLM,
  HookContext,
  CompactInfo,
  CompactResult,
  OperationContext,
  Pricing,
} from '../AgentLoop';
import type { SpentLimit } from '../BudgetLimits';
import { Deadline } from '../money/Deadline';
import { abortReason } from './abortReason';
import type { Budget } from '../money/Budget';
import type { ExternalBudget } from '../money/ExternalBudget';
import type { JournalEntry } from '../journal/JournalEntry';
import type { OnUnknownCost } from '../money/priceResponse';
import type { ResolvedRetry } from '../retry/retryAfter';
import type { StallWatch } from '../stall/StallWatch';
import type { RunRecording } from '../journal/RunRecording';
import type { ApprovalJournal } from '../journal/ApprovalJournal';
import type { UsageMeter } from '../money/UsageMeter';

/** What a turn needs from the adapter that runs it: the same for all of an adapter's turns. */
export interface TurnSettings {
  machine: StateMachine<StateName>;
  agent: AgentLoop;
  /** Budgets outside this process, consulted before every call. */
  external: readonly ExternalBudget[];
  /** Budgets other runs share (a batch's pool): a limit spent in one is said with the run's own figures beside. */
  shared: readonly Budget[];
  retry: ResolvedRetry;
  cancelGraceMs: number;
  toolConcurrency: number;
  pricing: Pricing | undefined;
  onUnknownCost: OnUnknownCost;
  /** Which failed requests are not billed (`billing`, over the provider rows). */
  billing: readonly BillingRule[];
  /** Per agent: whether the unknown-cost warning was logged already. */
  warned: { unknownCost: boolean };
  sleep: Sleep;
  random: () => number;
  clock: () => number;
  logger: AgentLogger | undefined;
  /** Writes a journal entry (the adapter's `journal` option), or undefined when the journal is off. */
  journal: ((entry: JournalEntry) => void) | undefined;
  /**
   * Writes the money ledger's lines (on with `journal` or `ledger`), or undefined when it is off.
   * For a `reserve` line it returns the sink's commit when the sink gives one: awaited before the call.
   */
  ledger: ((entry: JournalEntry) => PromiseLike<void> | undefined | void) | undefined;
  /** The reservation a ledger line states when a call's worst case is unknown (`ledgerDefaultMaxCostUsd`). */
  ledgerDefaultMaxCostUsd: number | undefined;
  /** The fewest output tokens a strict cap lowers a request's max output tokens to (`minOutputTokens`). */
  minOutputTokens: number;
  /** The interrupted run's journal this agent resumes from (`resumeFrom`), or undefined. */
  recording: RunRecording | undefined;
  /**
   * Which tool calls wait for a person, and for how long at most, and the answers' journal
   * (written as taken; with `resumeFrom`, those of the interrupted run); undefined when no call waits.
   */
  approval: { policy: ApprovalPolicy; timeoutMs: number | undefined; journal: ApprovalJournal } | undefined;
  /** The loop's `compact`, bound, when the adapter's `compact` option is on. */
  compact: ((info: CompactInfo, ctx: HookContext) => Promise<CompactResult | void>) | undefined;
  /** Watches the run for loops that go nowhere (the adapter's `stall`); undefined when off. */
  stall: StallWatch | undefined;
  /** Whether `event` has listeners now: events nobody hears are not built. */
  hears: (event: keyof AgentEvents) => boolean;
  /** Reports an event. Never throws. */
  emit: <K extends keyof AgentEvents>(event: K, ...args: AgentEvents[K]) => void;
}

/**
 * What the parts of one turn share (the state sequence, the LLM call, the tool pool): the
 * settings, the turn's number, its signal, its meter, and the grace its operations get once it
 * is aborted. Internal: `TurnRunner` makes one per turn.
 */
export class TurnScope {
  readonly settings: TurnSettings;
  readonly turn: number;
  readonly meter: UsageMeter;
  readonly signal: AbortSignal;
  /**
   * Set by the turn: waits, out of the turn's wall time, for a pausing shared cap that refused a
   * call to be raised (true: try the call again) or for the turn to abort (false).
   */
  waitForRaise: ((spent: SpentLimit) => Promise<boolean>) | undefined;
  /** Hooks' LLM calls through `ctx.llm` so far this turn: each one's number in its ledger lines. */
  hookCalls = 0;
  readonly #controller: AbortController;
  /** Every operation of the turn is awaited through it, and abandoned after the grace once the turn aborts. */
  readonly #ops: GraceGroup;

  /** `controller` is this turn's alone, and only `abort()` aborts it: operations get their grace from there, with no listener on its signal. */
  constructor(settings: TurnSettings, turn: number, controller: AbortController, meter: UsageMeter) {
    this.settings = settings;
    this.turn = turn;
    this.meter = meter;
    this.#controller = controller;
    this.signal = controller.signal;
    this.waitForRaise = undefined;
    this.#ops = new GraceGroup(controller.signal, settings.cancelGraceMs, settings.sleep);
  }

  /** Cancels the turn (or ends it at its deadline): the running operations get their grace. */
  abort(reason: unknown): void {
    if (this.signal.aborted) return;
    this.#controller.abort(reason);
    this.#ops.aborted();
  }

  /** The limit whose deadline aborted the turn, if that is what aborted it. */
  get deadline(): SpentLimit | undefined {
    const reason: unknown = this.signal.reason;
    return reason instanceof Deadline ? reason.spent : undefined;
  }

  /** Why the turn was aborted, in words. */
  reason(): string {
    return abortReason(this.signal);
  }

  /**
   * Awaits an operation; on cancellation (or a passed deadline), gives it `cancelGraceMs` to
   * finish or abort through its signal, then abandons it so that a tool ignoring the signal
   * cannot hang the turn.
   */
  settle<T>(
    op: (ctx: OperationContext) => Promise<T> | T,
    attempt?: number,
    maxOutputTokens?: number,
  ): Promise<Settled<T>> {
    return this.#start(
      op,
      attempt === undefined
        ? { signal: this.signal, turn: this.turn }
        : maxOutputTokens === undefined
          ? { signal: this.signal, turn: this.turn, attempt }
          : { signal: this.signal, turn: this.turn, attempt, maxOutputTokens },
    );
  }

  /**
   * `settle` for a hook handed the run's budgets (`runTool`, `compact`): its context carries
   * `llm` beside the signal and the turn, made in one literal rather than spread from another.
   */
  settleHook<T>(op: (ctx: HookContext) => Promise<T> | T, llm: BudgetedLLM): Promise<Settled<T>> {
    return this.#start(op, { signal: this.signal, turn: this.turn, llm });
  }

  #start<T, C>(op: (ctx: C) => Promise<T> | T, ctx: C): Promise<Settled<T>> {
    let started: Promise<T> | T;
    try {
      started = op(ctx);
    } catch (error) {
      return Promise.resolve({ kind: 'threw', error });
    }
    return this.#ops.settle(started);
  }
}
