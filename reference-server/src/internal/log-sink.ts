import { fstatSync, writeSync } from 'node:fs';
import { isatty } from 'node:tty';

/** Where the logger's lines go. `write` never throws: a line it cannot write is dropped and counted. */
export interface LogSink {
  /** Writes one whole line (ending in `\n`); false when it was dropped. */
  write(line: string): boolean;
  /** Lines dropped since the process started. */
  readonly droppedTotal: number;
}

/**
 * Whether `fd` is written to synchronously by Node's own stream for it (a file, `/dev/full`, a terminal): then
 * `writeSync` here does the same, with the error in our hands. A pipe or a socket is left to Node's stream,
 * which queues what the reader has not taken yet instead of failing with EAGAIN.
 */
function writtenInPlace(fd: number): boolean {
  try {
    const stats = fstatSync(fd);
    return stats.isFile() || stats.isCharacterDevice() || isatty(fd);
  } catch {
    return false;
  }
}

/**
 * Standard error as a log sink that never stops the service. A log on a full disk (or on `/dev/full`) fails every
 * write with ENOSPC; written through `process.stderr`, the first failure was an unhandled `'error'` event that
 * ended the process, and the stream stayed destroyed after it. Here a line that cannot be written is dropped and
 * counted, the next write tries again, and the first line that gets through after a drop is preceded by one
 * line saying how many were lost (`log lines dropped`, with `dropped` since the last line written and
 * `droppedTotal` since start): an operator reading the log sees the gap and its size where it happened. A line
 * cut short by the disk filling mid-write is ended before the next one, so every line stays one JSON object.
 *
 * @example
 * const logger = createJsonLogger(createStderrSink());
 */
export function createStderrSink(fd = 2): LogSink {
  const inPlace = writtenInPlace(fd);
  let dropped = 0;
  let droppedTotal = 0;
  /** A write stopped within a line: the next one starts on a line of its own. */
  let midLine = false;
  if (!inPlace) {
    // Node's stream reports a failed write (EPIPE: the reader is gone) as an event; without a listener it would
    // end the process. The lines it could not write are not known one by one here: the notice cannot count them.
    process.stderr.on('error', () => {});
  }

  const writeAll = (text: string): boolean => {
    if (!inPlace) {
      if (process.stderr.destroyed) return false;
      process.stderr.write(text);
      return true;
    }
    const bytes = Buffer.from(midLine ? `\n${text}` : text);
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
      midLine = false;
      return true;
    } catch {
      if (offset > 0) midLine = bytes[offset - 1] !== 0x0a;
      return false;
    }
  };

  return {
    write(line) {
      if (dropped > 0) {
        const notice = JSON.stringify({
          time: new Date().toISOString(),
          level: 'warn',
          message: 'log lines dropped: the log could not be written (disk full?)',
          dropped,
          droppedTotal,
        });
        if (!writeAll(`${notice}\n`)) {
          dropped += 1;
          droppedTotal += 1;
          return false;
        }
        dropped = 0;
      }
      if (writeAll(line)) return true;
      dropped += 1;
      droppedTotal += 1;
      return false;
    },
    get droppedTotal() {
      return droppedTotal;
    },
  };
}

let processStderr: LogSink | undefined;

/**
 * The process's one sink on standard error (`createStderrSink(2)`), made on first use and shared by every
 * logger, so that the count of dropped lines is one count.
 *
 * @example
 * const logger = createJsonLogger((line) => stderrSink().write(line));
 */
export function stderrSink(): LogSink {
  processStderr ??= createStderrSink(2);
  return processStderr;
}
