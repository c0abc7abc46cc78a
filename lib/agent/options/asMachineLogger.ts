import type { Logger } from 'winston';
import { safeLog, type AgentLogger } from '../AgentLogger';
import { levelIsFixed } from '../../machine/levelIsFixed';

/**
 * The machine logs through winston's `log(level, …)` and `isLevelEnabled`; any other logger is
 * adapted to that, every level enabled (the logger filters), every call contained.
 */
export function asMachineLogger(logger: AgentLogger): Logger {
  // A batch makes one adapter per run, nearly always with the same logger: its shim is made once.
  let shim = shims.get(logger);
  if (shim === undefined) shims.set(logger, (shim = makeShim(logger)));
  return shim;
}

/** The machine-facing shim of each logger seen, for as long as the logger lives. */
const shims = new WeakMap<object, Logger>();

function makeShim(logger: AgentLogger): Logger {
  const l = logger as Partial<Logger>;
  const winstonLike =
    typeof l.log === 'function' && typeof l.isLevelEnabled === 'function' && typeof l.level === 'string';
  const write = (level: string, message: string, meta?: Record<string, unknown>): void => {
    if (winstonLike) {
      (logger as Logger).log(level, message, meta);
      return;
    }
    safeLog(logger, level === 'error' || level === 'warn' || level === 'info' ? level : 'debug', message, meta ?? {});
  };
  let shim: Logger;
  const methods = {
    isLevelEnabled: (level: string): boolean => (winstonLike ? (logger as Logger).isLevelEnabled(level) : true),
    log: (level: string, message: string, meta?: Record<string, unknown>) => (write(level, message, meta), shim),
    error: (m: string, meta?: Record<string, unknown>) => (write('error', m, meta), shim),
    warn: (m: string, meta?: Record<string, unknown>) => (write('warn', m, meta), shim),
    info: (m: string, meta?: Record<string, unknown>) => (write('info', m, meta), shim),
    debug: (m: string, meta?: Record<string, unknown>) => (write('debug', m, meta), shim),
  };
  // The machine reads the level on every move. Where the logger keeps it in a data property of
  // its own (winston does), the shim inherits it, so that reading it is a plain load and still
  // sees every change; otherwise a getter reads it. A level that cannot change (the default
  // logger's) the shim holds read-only too, so the machine reads it once.
  const own = winstonLike ? Object.getOwnPropertyDescriptor(logger, 'level') : undefined;
  if (!winstonLike) shim = { level: 'debug', ...methods } as unknown as Logger;
  else if (own !== undefined && 'value' in own)
    shim = Object.create(logger, {
      ...Object.getOwnPropertyDescriptors(methods),
      ...(levelIsFixed(logger) ? { level: own } : {}),
    }) as Logger;
  else {
    shim = {
      get level(): string {
        return (logger as Logger).level;
      },
      ...methods,
    } as unknown as Logger;
  }
  return shim;
}
