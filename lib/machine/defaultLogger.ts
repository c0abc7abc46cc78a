import winston from 'winston';
import { InvalidArgumentError } from './InvalidArgumentError';
import { safeStringify } from '../internal/safeStringify';
import { escapeControl } from '../internal/escapeControl';

/** Environment variable that sets the default logger's level. */
export const LOG_LEVEL_ENV = 'AGENT_SM_LOG_LEVEL';

let shared: winston.Logger | undefined;

/**
 * The logger machines use when none is given: winston, to stderr, at the level named by
 * `AGENT_SM_LOG_LEVEL` or `warn`. One per process, made on first use, so that ten thousand
 * machines in a batch share one.
 */
export function getDefaultLogger(): winston.Logger {
  if (shared !== undefined) return shared;
  const raw = process.env[LOG_LEVEL_ENV];
  const level = raw === undefined || raw === '' ? 'warn' : raw;
  if (!Object.prototype.hasOwnProperty.call(winston.config.npm.levels, level)) {
    throw new InvalidArgumentError(LOG_LEVEL_ENV, `one of ${Object.keys(winston.config.npm.levels).join(', ')}`, raw);
  }
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
  return shared;
}
