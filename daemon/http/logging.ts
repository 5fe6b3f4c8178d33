// Structured logs (pino, JSON lines on stdout). Each request gets a child logger that
// carries its request id; the daemon's other parts take the Logger shape of
// runtime/logger.ts, which a pino logger satisfies.

import { pino, type Logger as PinoLogger } from 'pino';
import type { Logger } from '../runtime/logger.ts';

export type HttpLogger = Logger & { child(fields: Record<string, unknown>): HttpLogger };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export function createLogger(level: LogLevel = 'info', destination?: NodeJS.WritableStream): PinoLogger {
  return pino(
    {
      level,
      base: { service: 'trawl' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Credentials never reach a log line, whatever a caller logs.
      redact: { paths: ['headers.authorization', 'headers["x-service-api-key"]', 'headers.cookie', 'headers["x-csrf-token"]', '*.token'], censor: '[redacted]' },
    },
    destination as never,
  );
}

export const silentHttpLogger: HttpLogger = {
  info() {},
  warn() {},
  error() {},
  child() {
    return silentHttpLogger;
  },
};
