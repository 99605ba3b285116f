import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mountSmallDisk, type SmallDisk, smallDiskAvailable } from '../../../test/support/small-disk.ts';
import { createStderrSink } from './log-sink.ts';

// The sink on real files: /dev/full (ENOSPC on every write) and a real tmpfs that fills and frees. The server as
// a process, its log on both: test/cli/log-on-full-disk.test.ts.

const fds: number[] = [];
let disk: SmallDisk | undefined;

afterEach(() => {
  for (const fd of fds.splice(0)) closeSync(fd);
  disk?.remove();
  disk = undefined;
});

const line = (message: string) => `${JSON.stringify({ level: 'info', message })}\n`;

describe('createStderrSink', () => {
  it('drops and counts a line it cannot write, and never throws (/dev/full)', () => {
    const fd = openSync('/dev/full', 'w');
    fds.push(fd);
    const sink = createStderrSink(fd);
    expect(sink.write(line('one'))).toBe(false);
    expect(sink.write(line('two'))).toBe(false);
    expect(sink.droppedTotal).toBe(2);
  });

  it.runIf(smallDiskAvailable)(
    'ends a line the disk cut short, then says how many lines it dropped before the next one',
    () => {
      disk = mountSmallDisk(1);
      const path = join(disk.path, 'servicepay.log');
      const fd = openSync(path, 'a');
      fds.push(fd);
      const sink = createStderrSink(fd);
      expect(sink.write(line('first'))).toBe(true);
      // The file's one block has room for the rest of it, and no more: a long line is cut short.
      disk.fill();
      expect(sink.write(line(`long ${'x'.repeat(8_000)}`))).toBe(false);
      expect(sink.write(line('lost'))).toBe(false);
      disk.free();
      expect(sink.write(line('back'))).toBe(true);
      const lines = readFileSync(path, 'utf8').split('\n');
      // The cut line stands alone, and every other line is whole JSON.
      expect(lines[1]?.startsWith('{"level":"info","message":"long xxx')).toBe(true);
      expect(() => JSON.parse(lines[1] ?? '')).toThrow();
      const whole = [lines[0], ...lines.slice(2)].filter(Boolean).map((text) => JSON.parse(text ?? ''));
      expect(whole.map((entry) => entry.message)).toEqual([
        'first',
        'log lines dropped: the log could not be written (disk full?)',
        'back',
      ]);
      expect(whole[1]).toMatchObject({ level: 'warn', dropped: 2, droppedTotal: 2 });
      expect(sink.droppedTotal).toBe(2);
    },
  );
});
