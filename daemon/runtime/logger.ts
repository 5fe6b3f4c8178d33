// The logging surface the control plane writes to: pino's call shape (an object of fields,
// then a message), so the daemon can hand in a pino logger and tests a recorder. The
// default writes one JSON object per line to stderr.

export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

export function jsonLineLogger(write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const log = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    write(JSON.stringify({ level, time: new Date().toISOString(), ...fields, msg }) + '\n');
  return { info: log('info'), warn: log('warn'), error: log('error') };
}
