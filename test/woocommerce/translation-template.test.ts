import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { pluginDir } from './support/woo-stack.ts';

const run = promisify(execFile);
const template = join(pluginDir, 'languages', 'servicepay-woocommerce.pot');

/** `node bin/make-pot.mjs --check` in `dir`: its exit code and what it said. */
const check = async (dir: string) =>
  run('node', ['bin/make-pot.mjs', '--check'], { cwd: dir }).then(
    ({ stdout }) => ({ code: 0, said: stdout }),
    (error: { code: number; stderr: string }) => ({ code: error.code, said: error.stderr }),
  );

describe('the plugin translation template (languages/servicepay-woocommerce.pot)', () => {
  it('is what the sources give today, and gettext reads it', async () => {
    expect(await check(pluginDir)).toEqual({ code: 0, said: expect.stringMatching(/is up to date/) });
    await expect(run('msgfmt', ['--check', '--output-file=/dev/null', template])).resolves.toBeDefined();
  });

  it('holds what a shopper and a shop owner read, from the PHP and the checkout scripts, with the translators notes', () => {
    const pot = readFileSync(template, 'utf8');
    expect(pot).toContain('charset=UTF-8');
    expect(pot).toContain('X-Domain: servicepay-woocommerce');
    expect(pot).toMatch(
      /#: client\/blocks\.tsx [^\n]*src\/Admin\/SettingsForm\.php[^\n]*\nmsgid "Bank transfer"\n/,
    );
    expect(pot).toMatch(
      /#: client\/pay-order\.ts\nmsgid "Bank transfer is not available right now\. Please try again\."/,
    );
    expect(pot).toMatch(
      /#\. Plugin Name of the plugin\n#: servicepay-woocommerce\.php\nmsgid "ServicePay for WooCommerce"/,
    );
    expect(pot).toMatch(
      /#\. translators: %s: the key's prefix and last four characters\n#: src\/Admin\/SettingsForm\.php\n#, php-format\n/,
    );
  });

  it('is found stale when a translated string changes and the template is not regenerated', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'servicepay-pot-check-'));
    try {
      for (const entry of [
        'bin',
        'src',
        'client',
        'languages',
        'servicepay-woocommerce.php',
        'uninstall.php',
      ]) {
        cpSync(join(pluginDir, entry), join(copy, entry), { recursive: true });
      }
      const script = join(copy, 'client', 'pay-order.ts');
      writeFileSync(
        script,
        readFileSync(script, 'utf8').replace('Please try again.', 'Please try again later.'),
      );
      const stale = await check(copy);
      expect(stale.code).toBe(1);
      expect(stale.said).toMatch(/npm run pot/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
