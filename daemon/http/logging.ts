// Structured logs (pino, JSON lines on stdout). Each request gets a child logger that
// carries its request id; the daemon's other parts take the Logger shape of
// runtime/logger.ts, which a pino logger satisfies.

import { pino, type Logger as PinoLogger } from 'pino';
import type { Logger } from '../runtime/logger.ts';
import { API_KEY_HEADERS } from './auth.ts';
import { CSRF_HEADER } from '../auth/browser-session.ts';

export type HttpLogger = Logger & { child(fields: Record<string, unknown>): HttpLogger };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Every header that carries a credential, and any `token` field, wherever a caller logs them. */
const REDACTED = ['authorization', ...API_KEY_HEADERS.map((h) => h.toLowerCase()), 'cookie', CSRF_HEADER]
  .map((h) => `headers[${JSON.stringify(h)}]`)
  .concat('*.token');

export function createLogger(level: LogLevel = 'info', destination?: NodeJS.WritableStream): PinoLogger {
  return pino(
    {
      level,
      base: { service: 'trawl' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Credentials never reach a log line, whatever a caller logs.
      redact: { paths: REDACTED, censor: '[redacted]' },
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
