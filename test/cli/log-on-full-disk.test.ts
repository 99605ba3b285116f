import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CreatedBusinessSchema } from '@servicepay/node/protocol';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSession } from '../support/api.ts';
import { PortalClient } from '../support/portal-client.ts';
import { type ServerProcess, startServerProcess, stopAllServerProcesses } from '../support/server-process.ts';
import { mountSmallDisk, type SmallDisk, smallDiskAvailable } from '../support/small-disk.ts';

// The service's log is its standard error. On a full disk every write of it fails with ENOSPC: the real
// `servicepay-server start`, in its own process, must drop those lines (and say how many) and go on serving.

const BIN = fileURLToPath(new URL('../../reference-server/bin/servicepay-server.js', import.meta.url));
const run = promisify(execFile);

const folders: string[] = [];
let disk: SmallDisk | undefined;

afterEach(() => {
  disk?.remove();
  disk = undefined;
});

afterAll(async () => {
  await stopAllServerProcesses();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A business on the server's file, made by the CLI as an operator would; answers its test secret key. */
async function businessOn(dbPath: string): Promise<string> {
  const { stdout } = await run(process.execPath, [
    BIN,
    'business',
    'create',
    '--name',
    'Log Shop',
    '--db',
    dbPath,
    '--json',
  ]);
  return CreatedBusinessSchema.parse(JSON.parse(stdout)).keys.test.secretKey;
}

/** Starts the real server on a fresh SQLite file with its standard error on `stderr` (opened by the test). */
async function startWithLog(stderr: number): Promise<{ instance: ServerProcess; secretKey: string }> {
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-log-'));
  folders.push(folder);
  const dbPath = join(folder, 'servicepay.db');
  const secretKey = await businessOn(dbPath);
  try {
    return { instance: await startServerProcess({ dbPath, stderr }), secretKey };
  } finally {
    // The child holds its own copy.
    closeSync(stderr);
  }
}

describe('a log line that cannot be written', () => {
  it('never stops the server: with its standard error on /dev/full (ENOSPC on every write) it logs, and serves on', async () => {
    const { instance, secretKey } = await startWithLog(openSync('/dev/full', 'w'));
    // Each sign-in logs a line, and each line fails.
    for (let i = 0; i < 3; i++)
      expect((await new PortalClient(instance.url).signIn(secretKey)).status).toBe(303);
    expect(instance.running).toBe(true);
    expect((await fetch(`${instance.url}/health`)).status).toBe(200);
    const session = await createSession(instance.url, secretKey);
    expect(session.status).toBe('pending');
    expect(await instance.stop('SIGTERM')).toBe(0);
  });

  it.runIf(smallDiskAvailable)(
    'logs again once its disk (a real tmpfs) has space, the first line saying how many were dropped',
    async () => {
      disk = mountSmallDisk(1);
      const logPath = join(disk.path, 'servicepay.log');
      const { instance, secretKey } = await startWithLog(openSync(logPath, 'a'));
      // The log is still empty, so its first line needs a block of its own: none is left.
      disk.fill();
      for (let i = 0; i < 3; i++)
        expect((await new PortalClient(instance.url).signIn(secretKey)).status).toBe(303);
      expect(readFileSync(logPath, 'utf8')).toBe('');
      disk.free();
      expect((await new PortalClient(instance.url).signIn(secretKey)).status).toBe(303);
      const lines = readFileSync(logPath, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: string; message: string; dropped?: number });
      expect(lines.map((line) => line.message)).toEqual([
        'log lines dropped: the log could not be written (disk full?)',
        'portal sign-in',
      ]);
      expect(lines[0]).toMatchObject({ level: 'warn', dropped: 3, droppedTotal: 3 });
      expect(instance.running).toBe(true);
      expect(await instance.stop('SIGTERM')).toBe(0);
    },
  );
});
