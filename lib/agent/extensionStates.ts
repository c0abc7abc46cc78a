import type { StateSpec } from '../../states/AgentState';
import { State, type StateName } from '../../states/StateName';
import type { TableExtension } from '../machine/extendTable';

/** The extension states the adapter knows, by name. */
export const ExtensionState = Object.freeze({
  AwaitingApproval: 'AwaitingApproval',
  ApprovalTimedOut: 'ApprovalTimedOut',
  Compacting: 'Compacting',
  Stalled: 'Stalled',
  StallStopped: 'StallStopped',
  WrappingUp: 'WrappingUp',
} as const);

/** The name of an extension state the adapter knows: AwaitingApproval, ApprovalTimedOut, Compacting, Stalled, StallStopped or WrappingUp. */
export type ExtensionStateName = (typeof ExtensionState)[keyof typeof ExtensionState];

/** WrappingUp as the machine names states: an adapter checks at construction that its table has the state's edges. */
export const WRAPPING_UP = ExtensionState.WrappingUp as unknown as StateName;

const AWAITING_APPROVAL_SPEC: StateSpec<string> = Object.freeze({
  name: ExtensionState.AwaitingApproval,
  description: 'Tool calls wait for a person to approve or deny them',
  next: Object.freeze([State.RunningTool, ExtensionState.ApprovalTimedOut, State.Cancelled]),
  activity: 'wait',
});

const APPROVAL_TIMED_OUT_SPEC: StateSpec<string> = Object.freeze({
  name: ExtensionState.ApprovalTimedOut,
  description: 'No answer to an approval request came in time',
  next: Object.freeze([State.WaitingForUserInput]),
  isTerminal: true,
  isError: true,
});

const COMPACTING_SPEC: StateSpec<string> = Object.freeze({
  name: ExtensionState.Compacting,
  description: 'The conversation is compacted after the LLM said it is too long',
  next: Object.freeze([State.SendingToLLM, State.SendingToolResults, State.Error]),
  activity: 'compact',
});

const STALLED_SPEC: StateSpec<string> = Object.freeze({
  name: ExtensionState.Stalled,
  description: 'A stall detector found the agent repeating itself',
  next: Object.freeze([State.ToolUseRequested, ExtensionState.StallStopped]),
  activity: 'check',
});

const STALL_STOPPED_SPEC: StateSpec<string> = Object.freeze({
  name: ExtensionState.StallStopped,
  description: 'The run was stopped because it went nowhere',
  next: Object.freeze([State.WaitingForUserInput]),
  isTerminal: true,
  isError: true,
});

const WRAPPING_UP_SPEC: StateSpec<string> = Object.freeze({
  name: ExtensionState.WrappingUp,
  description: 'The next call would not fit in the cap: the model is asked for its final answer, with no tools',
  next: Object.freeze([State.EndOfTurn, State.Error]),
  activity: 'llm_request',
});

/**
 * What `extendTable` adds for ending within the cap (`budget.wrapUp`): WrappingUp after a
 * sending state whose ordinary call would not fit beside the final call's hold, left for
 * EndOfTurn (the answer; outcome `wrapped_up`) or Error.
 */
export const WRAP_UP_EXTENSION: TableExtension<'WrappingUp'> = Object.freeze({
  states: Object.freeze([WRAPPING_UP_SPEC]) as TableExtension<'WrappingUp'>['states'],
  edges: Object.freeze([
    Object.freeze([State.SendingToLLM, ExtensionState.WrappingUp] as const),
    Object.freeze([State.SendingToolResults, ExtensionState.WrappingUp] as const),
  ]),
});

/** The edges ending within the cap asks for. */
export function wrapUpEdges(): Array<readonly [string, string]> {
  return [
    [State.SendingToLLM, ExtensionState.WrappingUp],
    [State.SendingToolResults, ExtensionState.WrappingUp],
    [ExtensionState.WrappingUp, State.EndOfTurn],
    [ExtensionState.WrappingUp, State.Error],
  ];
}

/**
 * What `extendTable` adds for tool approval: AwaitingApproval between CheckingForCancellation
 * and RunningTool, left for RunningTool (answered), Cancelled or ApprovalTimedOut.
 */
export const APPROVAL_EXTENSION: TableExtension<'AwaitingApproval' | 'ApprovalTimedOut'> = Object.freeze({
  states: Object.freeze([AWAITING_APPROVAL_SPEC, APPROVAL_TIMED_OUT_SPEC]) as TableExtension<
    'AwaitingApproval' | 'ApprovalTimedOut'
  >['states'],
  edges: Object.freeze([Object.freeze([State.CheckingForCancellation, ExtensionState.AwaitingApproval] as const)]),
});

/**
 * What `extendTable` adds for compaction: Compacting after a sending state whose call overflowed
 * the context, back to that sending state (the retry), or to Error.
 */
export const COMPACTION_EXTENSION: TableExtension<'Compacting'> = Object.freeze({
  states: Object.freeze([COMPACTING_SPEC]) as TableExtension<'Compacting'>['states'],
  edges: Object.freeze([
    Object.freeze([State.SendingToLLM, ExtensionState.Compacting] as const),
    Object.freeze([State.SendingToolResults, ExtensionState.Compacting] as const),
  ]),
});

/**
 * What `extendTable` adds for stall detection (the adapter's `stall`): Stalled after a response
 * that repeats the run, left for ToolUseRequested (the model is nudged and the turn goes on) or
 * StallStopped (the run is stopped).
 */
export const STALL_EXTENSION: TableExtension<'Stalled' | 'StallStopped'> = Object.freeze({
  states: Object.freeze([STALLED_SPEC, STALL_STOPPED_SPEC]) as TableExtension<'Stalled' | 'StallStopped'>['states'],
  edges: Object.freeze([Object.freeze([State.ProcessingLLMResponse, ExtensionState.Stalled] as const)]),
});

/** The edges approval asks for (the timeout's only when a timeout is set). */
export function approvalEdges(timeout: boolean): Array<readonly [string, string]> {
  return [
    [State.CheckingForCancellation, ExtensionState.AwaitingApproval],
    [ExtensionState.AwaitingApproval, State.RunningTool],
    [ExtensionState.AwaitingApproval, State.Cancelled],
    ...(timeout
      ? ([
          [ExtensionState.AwaitingApproval, ExtensionState.ApprovalTimedOut],
          [ExtensionState.ApprovalTimedOut, State.WaitingForUserInput],
        ] as const)
      : []),
  ];
}

/** The edges compaction asks for. */
export function compactionEdges(): Array<readonly [string, string]> {
  return [
    [State.SendingToLLM, ExtensionState.Compacting],
    [State.SendingToolResults, ExtensionState.Compacting],
    [ExtensionState.Compacting, State.SendingToLLM],
    [ExtensionState.Compacting, State.SendingToolResults],
    [ExtensionState.Compacting, State.Error],
  ];
}

/** The edges stall detection asks for. */
export function stallEdges(): Array<readonly [string, string]> {
  return [
    [State.ProcessingLLMResponse, ExtensionState.Stalled],
    [ExtensionState.Stalled, State.ToolUseRequested],
    [ExtensionState.Stalled, ExtensionState.StallStopped],
    [ExtensionState.StallStopped, State.WaitingForUserInput],
  ];
}
