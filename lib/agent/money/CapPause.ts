import type { SpentLimit } from '../BudgetLimits';

/**
 * A turn stopped at a shared cap that pauses (`whenSpent: 'pause'`): its next LLM call did not
 * fit, and was not made. The turn tries the call again when `open()` is called (after a raise).
 */
export class CapPause {
  /** The refusal: the cap, what was spent or held, the call's worst case, the raises so far. */
  readonly spent: SpentLimit;
  readonly opened: Promise<void>;
  #open!: () => void;

  constructor(spent: SpentLimit) {
    this.spent = spent;
    this.opened = new Promise<void>((resolve) => (this.#open = resolve));
  }

  open(): void {
    this.#open();
  }
}
