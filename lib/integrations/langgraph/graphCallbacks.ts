import { InvalidArgumentError } from 'agent-state-machine';
import type { LangGraphObserve } from './LangGraphMirrorOptions';

/**
 * The callbacks `LangGraphMirror.run()` invokes the graph with: the caller's (`given`), and
 * `handler` unless it observes only what it wrapped — then it checks that a model and tools were
 * wrapped (`served`), since a mirror that wrapped nothing would see no call and cap none.
 */
export function graphCallbacks(
  given: unknown,
  handler: { observe: LangGraphObserve },
  served: { modelWrapped: boolean; toolsWrapped: boolean },
): unknown {
  if (given !== undefined && !Array.isArray(given) && typeof (given as { copy?: unknown }).copy !== 'function')
    throw new InvalidArgumentError('config.callbacks', 'an array of handlers or a CallbackManager', given);
  if (handler.observe === 'wrapped') {
    const missing = [
      ...(served.modelWrapped ? [] : ['lg.wrapModel(model)']),
      ...(served.toolsWrapped ? [] : ['lg.wrapTools(tools)']),
    ];
    if (missing.length > 0)
      throw new InvalidArgumentError(
        'observe',
        `'graph', or a graph built on ${missing.join(' and ')} (wrapTools([]) for a graph with no tools): observing 'wrapped', the mirror hears only the model and tools it wrapped`,
        handler.observe,
      );
    return given;
  }
  if (given === undefined || Array.isArray(given)) return [...((given as unknown[] | undefined) ?? []), handler];
  const manager = (given as { copy(): { addHandler(h: unknown, inherit?: boolean): void } }).copy();
  manager.addHandler(handler, true);
  return manager;
}
