import type Winston from 'winston';
import { InvalidArgumentError } from './InvalidArgumentError';
import { safeStringify } from '../internal/safeStringify';
import { escapeControl } from '../internal/escapeControl';
import { requireOptional } from '../internal/requireOptional';

/** Environment variable that sets the default logger's level. */
export const LOG_LEVEL_ENV = 'AGENT_SM_LOG_LEVEL';

let shared: Winston.Logger | undefined;

/**
 * The logger machines use when none is given: winston, to stderr, at the level named by
 * `AGENT_SM_LOG_LEVEL` or `warn` (an unknown level is reported once, and `warn` is used). One per process, made on first use, so that ten thousand
 * machines in a batch share one.
 */
export function getDefaultLogger(): Winston.Logger {
  if (shared !== undefined) return shared;
  const winston = requireOptional<typeof Winston>('winston');
  const raw = process.env[LOG_LEVEL_ENV];
  let level = raw === undefined || raw === '' ? 'warn' : raw;
  // A typo in an environment variable must not make every constructor throw: say so once
  // (the logger is made once per process) and use the default.
  const unknown = !Object.prototype.hasOwnProperty.call(winston.config.npm.levels, level);
  if (unknown) level = 'warn';
  shared = winston.createLogger({
    level,
    format: winston.format.combine(
      winston.format.timestamp(),
      winston.format.printf(({ timestamp, level: lvl, message, ...meta }) => {
        const extra = Object.keys(meta).length > 0 ? ` ${safeStringify(meta)}` : '';
        // Messages carry descriptions and state names from the run: escaped, they cannot forge a log line.
        return `${String(timestamp)} agent-state-machine ${lvl}: ${escapeControl(String(message))}${escapeControl(extra)}`;
      }),
    ),
    transports: [new winston.transports.Console({ stderrLevels: Object.keys(winston.config.npm.levels) })],
  });
  if (unknown) {
    shared.warn(
      new InvalidArgumentError(LOG_LEVEL_ENV, `one of ${Object.keys(winston.config.npm.levels).join(', ')}`, raw)
        .message + '; logging at warn',
    );
  }
  // Nothing outside the package can reach this logger, so its level is fixed for the process.
  // Saying so (read-only) lets every machine read it once instead of on every move.
  Object.defineProperty(shared, 'level', { value: level, writable: false, enumerable: true, configurable: false });
  return shared;
}
