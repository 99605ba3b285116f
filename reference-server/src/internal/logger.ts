import { stderrSink } from './log-sink.ts';
import { requestScope } from './request-scope.ts';

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

/** The levels a logger writes, from the most to the least verbose; `silent` writes nothing. */
export const LOG_LEVELS = ['info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Whether `value` names a level (`--log-level`, `SERVICEPAY_LOG_LEVEL`). */
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** Masks anything shaped like a key, client secret, widget token or signing secret. */
export function redact(text: string): string {
  return text.replace(SECRET_PATTERN, (match) => `${match.slice(0, match.indexOf('_') + 1)}[redacted]`);
}

/**
 * One JSON line per entry at `level` or above, written by `write`: by default to standard error through
 * `stderrSink()`, where a line that cannot be written (a full disk) is dropped and counted instead of ending the
 * process. A line written while a request is handled carries its `requestId` (`requestScope`).
 *
 * @example
 * const logger = createJsonLogger(undefined, 'warn');
 * logger.warn('bank notification refused', { status: 503 });
 */
export function createJsonLogger(
  write: (line: string) => void = (line) => {
    stderrSink().write(line);
  },
  level: LogLevel = 'info',
): Logger {
  const lowest = LOG_LEVELS.indexOf(level);
  const log = (entryLevel: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(entryLevel) < lowest) return;
    const requestId = requestScope.getStore()?.requestId;
    const entry = {
      time: new Date().toISOString(),
      level: entryLevel,
      message,
      ...(requestId === undefined ? {} : { requestId }),
      ...fields,
    };
    write(`${redact(JSON.stringify(entry))}\n`);
  };
  return {
    info: (message, fields) => log('info', message, fields),
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
