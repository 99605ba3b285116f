import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createSession } from '../support/api.ts';

// `npm start` as the README promises it: the service on its embedded default, a development business,
// and its test keys printed, the same ones on every start. Run as the script npm runs, on a temporary folder.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'servicepay-start-'));
const dbPath = join(folder, 'servicepay.db');

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

/** Starts `scripts/start.ts`, waits for its banner, returns what it printed and a way to stop it. */
async function npmStart(): Promise<{ url: string; secretKey: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, SERVICEPAY_DB: dbPath, SERVICEPAY_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const printed = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('Press Ctrl+C')) resolve(out);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${out}`)));
  });
  const url = /API\s+(http:\/\/\S+)/.exec(printed)?.[1];
  const secretKey = /secret key\s+(sk_test_[0-9A-Za-z]{32})/.exec(printed)?.[1];
  if (!url || !secretKey) throw new Error(`npm start printed no URL or key:\n${printed}`);
  const stop = () =>
    new Promise<number | null>((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return { url, secretKey, stop };
}

describe('npm start', () => {
  it('serves with a printed test key that works, and prints the same key after a restart', async () => {
    const first = await npmStart();
    const created = await createSession(first.url, first.secretKey);
    expect(created).toMatchObject({ status: 'pending', environment: 'test' });
    expect(await first.stop()).toBe(0);

    // The keys file beside the database is the owner's alone: it holds the development business's keys.
    expect(statSync(join(folder, 'development-keys.json')).mode & 0o077).toBe(0);

    const second = await npmStart();
    expect(second.secretKey).toBe(first.secretKey);
    const again = await createSession(second.url, second.secretKey);
    expect(again.id).not.toBe(created.id);
    expect(await second.stop()).toBe(0);
  });
});
