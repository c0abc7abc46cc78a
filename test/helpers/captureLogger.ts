import { Writable } from 'node:stream';
import winston from 'winston';

export interface LogEntry {
  level: string;
  message: string;
  meta: Record<string, unknown>;
}

/** A real winston logger whose entries are kept in memory, for asserting what was logged. */
export function captureLogger(level = 'debug'): { logger: winston.Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  // An object-mode stream receives winston's info objects as they are.
  const stream = new Writable({
    objectMode: true,
    write(info: Record<string, unknown>, _encoding, done) {
      const { level: lvl, message, ...meta } = info;
      // Object.entries drops winston's internal symbol keys.
      entries.push({ level: String(lvl), message: String(message), meta: Object.fromEntries(Object.entries(meta)) });
      done();
    },
  });
  return { logger: winston.createLogger({ level, transports: [new winston.transports.Stream({ stream })] }), entries };
}
