import { messageOf } from '../internal/messageOf';
import type { Logger } from 'winston';

/** Logs through `logger`; a logger that throws (a transport failing, data JSON cannot encode) must not break a move that already happened. */
export function logSafely(
  logger: Logger,
  level: 'debug' | 'info' | 'warn' | 'error',
  message: string,
  meta: Record<string, unknown>,
): void {
  try {
    logger.log(level, message, meta);
  } catch (error) {
    process.emitWarning(`agent-state-machine: the logger threw while logging "${message}": ${messageOf(error)}`);
  }
}
