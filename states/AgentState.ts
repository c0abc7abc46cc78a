/**
 * What every state in a transition table must say about itself. The state classes implement
 * it, and so can a plain object, so that a custom state (say, Compacting) needs no subclass.
 */
export interface StateSpec<S extends string = string> {
  /** The state's name, as used in tables, history and logs. */
  readonly name: S;
  /** One line for people: what the agent is doing while in this state. */
  readonly description: string;
  /** The states this one may move to. */
  readonly next: readonly S[];
  /** A turn has ended when the machine is in this state. */
  readonly isTerminal?: boolean;
  /** The turn ended badly in this state. */
  readonly isError?: boolean;
  /**
   * What the agent spends its time on in this state, so that readers (timeline colours, OTLP
   * spans, which turns a file pauses in) need no list of state names. Optional: a state without
   * one is drawn in a colour of its own and given no span.
   */
  readonly activity?: StateActivity;
}

/**
 * `idle`: between turns. `llm_request`: an LLM call is made from here (leaving it ends the call).
 * `llm_response`: a response arrived. `tool_run`: tool calls run here (leaving it carries their
 * results). `tool`, `check`: other work of a turn. `wait`: the turn waits for a person (a
 * run may stop here and be picked up later). `compact`: the conversation is being shortened.
 */
export type StateActivity =
  'idle' | 'llm_request' | 'llm_response' | 'tool' | 'tool_run' | 'check' | 'wait' | 'compact';

/**
 * Base class of the sixteen states: the flags live here, on the state, so that no `switch`
 * elsewhere has to list which states are terminal or erroneous.
 */
export abstract class AgentState<S extends string = string> implements StateSpec<S> {
  abstract readonly name: S;
  abstract readonly description: string;
  abstract readonly next: readonly S[];
  readonly isTerminal: boolean = false;
  readonly isError: boolean = false;
  declare readonly activity?: StateActivity;

  /** Whether the table lets this state move to `to`. */
  canMoveTo(to: string): boolean {
    return (this.next as readonly string[]).includes(to);
  }

  toString(): string {
    return this.name;
  }
}
