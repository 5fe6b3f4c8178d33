// The logging surface the control plane writes to: pino's call shape (an object of fields,
// then a message), so the daemon can hand in a pino logger and tests a recorder..

export interface Logger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
