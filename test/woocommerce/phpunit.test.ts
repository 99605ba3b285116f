import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { pluginDir } from './support/woo-stack.ts';

const run = promisify(execFile);

// The plugin's PHP unit tests that need no WordPress (the wordpress group runs in woocommerce.test.ts, inside
// a real WooCommerce). Debian's phpunit 9.6 on PHP 8.2.
describe('servicepay-woocommerce PHPUnit (unit tests, no WordPress)', () => {
  it('passes: signature vectors shared with the SDK, sealed secrets, keys, minor units, settings', async () => {
    let output: string;
    try {
      ({ stdout: output } = await run(
        'phpunit',
        ['-c', join(pluginDir, 'tests', 'phpunit.xml'), '--exclude-group', 'wordpress', '--testdox'],
        { cwd: pluginDir },
      ));
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      throw new Error(`PHPUnit failed:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
    }
    expect(output).toMatch(/OK \(\d+ tests, \d+ assertions\)/);
    // Every class with a unit test ran.
    for (const name of ['Signature Verifier', 'Secret Box', 'Api Key', 'Money', 'Settings'])
      expect(output).toContain(name);
    expect(output).toContain('Agrees with the sdk on the shared vectors');
  });
});
