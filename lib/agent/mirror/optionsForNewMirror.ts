import { InvalidArgumentError } from '../../machine/InvalidArgumentError';
import { assertKnownOptions } from '../../machine/assertKnownOptions';
import { MIRROR_CANNOT, MIRROR_OPTION_KEYS } from '../options/optionKeys';
import { outsideEndings, refuseEndings } from '../endings/refuseEndings';
import type { MirrorIntegration } from './mirrorEndings';
import type { StepMirrorOptions } from './StepMirrorOptions';

/**
 * The options of the mirror an integration makes for itself (`StepMirror.fromOptions` with no
 * `mirror`): each known, `honours` the integration's own, and every budget's endings ones the
 * integration makes — refused by name otherwise, with `where` naming the integration.
 */
export function optionsForNewMirror(
  options: StepMirrorOptions,
  where: string,
  integration: MirrorIntegration,
): StepMirrorOptions {
  assertKnownOptions(options, MIRROR_OPTION_KEYS, where, MIRROR_CANNOT);
  if (options.honours !== undefined)
    throw new InvalidArgumentError(
      'honours',
      `left out of ${where}: the integration says what it honours`,
      options.honours,
    );
  const budgets = [...(options.budget === undefined ? [] : [{ limits: options.budget, label: 'budget' }])];
  const outside = outsideEndings(options.externalBudgets ?? []);
  const cannot = { ...MIRROR_CANNOT, ...integration.cannot };
  refuseEndings([...budgets, ...(options.sharedBudgets ?? []), ...outside], cannot, where, integration.honours);
  return { ...options, ...(integration.honours === undefined ? {} : { honours: integration.honours }) };
}
