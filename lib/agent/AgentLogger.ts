/**
 * Any logger the adapter can write to: an object with `error`, `warn`, `info` and `debug`
 * methods taking `(message, meta)` — winston, pino (`child`-free use), console-like objects.
 */
export interface AgentLogger {
  error(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  info(message: string, meta?: Record<string, unknown>): unknown;
  debug(message: string, meta?: Record<string, unknown>): unknown;
}

/** Whether `value` has the four logging methods. */
export function isAgentLogger(value: unknown): value is AgentLogger {
  return (
    typeof value === 'object' &&
    value !== null &&
    (['error', 'warn', 'info', 'debug'] as const).every(
      (m) => typeof (value as Record<string, unknown>)[m] === 'function',
    )
  );
}

/** Logs and never throws: a failing logger must not change a turn's outcome. */
export function safeLog(
  logger: AgentLogger | undefined,
  level: 'error' | 'warn' | 'info' | 'debug',
  message: string,
  meta: Record<string, unknown>,
): void {
  if (logger === undefined) return;
  try {
    logger[level](message, meta);
  } catch (error) {
    try {
      process.emitWarning(
        `agent-state-machine: the logger threw while logging "${message}": ${error instanceof Error ? error.message : String(error)}`,
      );
    } catch {
      // nothing more to do
    }
  }
}
