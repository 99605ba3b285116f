import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, checkTimeouts, defaultConfig, resolveConfig, TIMEOUT_PAIRS } from './config.ts';
import { createService } from './service.ts';

// The listeners' timeouts are refused when the configuration is resolved: before a database is opened or a
// listener made, and in one line naming the setting, never Node's ERR_OUT_OF_RANGE from `http.createServer`.

/** The `ConfigError` `run` throws, or a failure when it throws nothing or something else. */
function refusal(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

describe('the timeouts in the configuration', () => {
  it('the defaults pass, and a header timeout equal to its request timeout passes', () => {
    const config = resolveConfig({ headersTimeoutMs: 15_000, requestTimeoutMs: 15_000 });
    expect(config.headersTimeoutMs).toBe(15_000);
    expect(config.requestTimeoutMs).toBe(15_000);
    expect(
      resolveConfig({ widgetHeadersTimeoutMs: 1, widgetRequestTimeoutMs: 1 }).widgetRequestTimeoutMs,
    ).toBe(1);
    const defaults = defaultConfig();
    for (const [headers, request] of TIMEOUT_PAIRS)
      expect(defaults[headers]).toBeLessThanOrEqual(defaults[request]);
  });

  it.each([
    [
      'headersTimeoutMs',
      { headersTimeoutMs: 40_000 },
      "headersTimeoutMs (40000 ms) is longer than requestTimeoutMs (30000 ms): a request's headers arrive within the request, so the header timeout must be at most the request timeout",
    ],
    [
      'headersTimeoutMs',
      { requestTimeoutMs: 5_000 },
      "headersTimeoutMs (10000 ms) is longer than requestTimeoutMs (5000 ms): a request's headers arrive within the request, so the header timeout must be at most the request timeout",
    ],
    [
      'widgetHeadersTimeoutMs',
      { widgetHeadersTimeoutMs: 20_000 },
      "widgetHeadersTimeoutMs (20000 ms) is longer than widgetRequestTimeoutMs (15000 ms): a request's headers arrive within the request, so the header timeout must be at most the request timeout",
    ],
    [
      'widgetHeadersTimeoutMs',
      { widgetRequestTimeoutMs: 9_999 },
      "widgetHeadersTimeoutMs (10000 ms) is longer than widgetRequestTimeoutMs (9999 ms): a request's headers arrive within the request, so the header timeout must be at most the request timeout",
    ],
  ])(
    'a header timeout longer than its request timeout is refused, naming %s',
    (setting, overrides, message) => {
      const error = refusal(() => resolveConfig(overrides));
      expect(error.setting).toBe(setting);
      expect(error.message).toBe(message);
      expect(error.message).not.toContain('\n');
    },
  );

  it.each([
    ['headersTimeoutMs', 0],
    ['requestTimeoutMs', 0],
    ['widgetHeadersTimeoutMs', -1],
    ['widgetRequestTimeoutMs', 15_000.5],
    ['requestTimeoutMs', Number.NaN],
    ['headersTimeoutMs', Number.POSITIVE_INFINITY],
  ] as const)('%s = %s is refused: a whole number of milliseconds from 1', (setting, value) => {
    const error = refusal(() => resolveConfig({ [setting]: value }));
    expect(error.setting).toBe(setting);
    expect(error.message).toBe(
      `${setting} must be a whole number of milliseconds, at least 1 (got ${String(value)})`,
    );
  });

  it('names each setting as the caller says it was given', () => {
    const error = refusal(() =>
      checkTimeouts({ ...defaultConfig(), widgetHeadersTimeoutMs: 20_000 }, (setting) =>
        setting === 'widgetHeadersTimeoutMs' ? '--widget-headers-timeout-ms' : `(${setting})`,
      ),
    );
    expect(error.setting).toBe('--widget-headers-timeout-ms');
    expect(error.message).toMatch(
      /^--widget-headers-timeout-ms \(20000 ms\) is longer than \(widgetRequestTimeoutMs\) \(15000 ms\)/,
    );
  });

  it('createService refuses a bad pair before it touches the disk: no database, no secrets key', () => {
    const folder = mkdtempSync(join(tmpdir(), 'servicepay-config-'));
    try {
      // With a good pair, createService makes the SQLite file and the development key here at once.
      const error = refusal(() =>
        createService({ dbPath: join(folder, 'servicepay.db'), headersTimeoutMs: 31_000 }),
      );
      expect(error.setting).toBe('headersTimeoutMs');
      expect(readdirSync(folder)).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
