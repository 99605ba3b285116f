import { stderrSink } from './log-sink.ts';

/**
 * A structured logger: one JSON line per entry on stderr. Callers pass fields, never whole requests, so a
 * secret cannot end up in a log line by accident; `redact` masks the few fields that could carry one.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const SECRET_PATTERN = /\b(sk|pk|cs|wt|whsec)_(test_|live_)?[0-9A-Za-z]{8,}/g;

/** Masks anything shaped like a key, client secret, widget token or signing secret. */
export function redact(text: string): string {
  return text.replace(SECRET_PATTERN, (match) => `${match.slice(0, match.indexOf('_') + 1)}[redacted]`);
}

/**
 * One JSON line per entry, written by `write`: by default to standard error through `stderrSink()`, where a line
 * that cannot be written (a full disk) is dropped and counted instead of ending the process.
 *
 * @example
 * const logger = createJsonLogger();
 * logger.warn('bank notification refused', { status: 503 });
 */
export function createJsonLogger(
  write: (line: string) => void = (line) => {
    stderrSink().write(line);
  },
): Logger {
  const log = (level: string, message: string, fields?: Record<string, unknown>) => {
    const entry = { time: new Date().toISOString(), level, message, ...fields };
    write(`${redact(JSON.stringify(entry))}\n`);
  };
  return {
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
