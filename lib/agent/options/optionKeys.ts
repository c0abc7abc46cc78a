// The names each entry point takes, read from the one declaration of every option
// (internal/optionTable.ts). assertKnownOptions checks each list against the type of the options
// it is given: a key added to the type and not declared (or declared and not in the type) fails
// the type check, so the lists cannot drift.
import { keysOn, refusedOn } from '../../internal/optionTable';

/** The keys of `new AgentWithStateMachine(loop, options)`. */
export const AGENT_OPTION_KEYS = keysOn('adapter');

/** The keys of `runTurn(input, options)`. */
export const RUN_TURN_OPTION_KEYS = keysOn('runTurn');

/** The keys of `new StepMirror(options)`. */
export const MIRROR_OPTION_KEYS = keysOn('mirror');

/**
 * The adapter options a framework's loop cannot honour through a mirror, each with why and what
 * to use instead. A framework task given one is refused by name rather than run without it.
 */
export const MIRROR_CANNOT: Readonly<Record<string, string>> = Object.freeze({
  ...refusedOn('mirror'),
  // Keys inside `budget` (and `perRun`, `total`), refused by refuseEndings unless the mirror's integration honours them.
  'budget.wrapUp':
    "this mirror's calls are made by the framework as it built them, so no final call with no tools can be made (mirrorAISDK makes one; elsewhere end the framework's loop yourself: AI SDK `stopWhen`, Agents SDK `maxTurns`, LangGraph `recursionLimit`)",
  'budget.visible':
    "this mirror's requests are built by the framework, so no note can be added to them (mirrorAISDK adds one)",
});
