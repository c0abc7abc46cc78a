import type { AgentLoop } from '../AgentLoop';
import { InvalidArgumentError } from '../../machine/InvalidArgumentError';

const REQUIRED = ['sendUserMessage', 'sendToolResults', 'runTool'] as const;
const OPTIONAL = [
  'checkGitCommits',
  'runAutoformatters',
  'gatherAdditionalMessages',
  'settleToolCalls',
  'llmCallBound',
  'acceptRecorded',
  'compact',
] as const;

/** Throws, naming the operation, unless `agent` has every required operation as a function and each optional one absent or a function. */
export function assertAgentLoop(agent: unknown): asserts agent is AgentLoop {
  if (typeof agent !== 'object' || agent === null) {
    throw new InvalidArgumentError('agent', `an object with ${REQUIRED.join(', ')}`, agent);
  }
  for (const name of REQUIRED) {
    const op = (agent as Record<string, unknown>)[name];
    if (typeof op !== 'function') throw new InvalidArgumentError(`agent.${name}`, 'a function (it is required)', op);
  }
  for (const name of OPTIONAL) {
    const op = (agent as Record<string, unknown>)[name];
    if (op !== undefined && typeof op !== 'function')
      throw new InvalidArgumentError(`agent.${name}`, 'a function or undefined', op);
  }
}
