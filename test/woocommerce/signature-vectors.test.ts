import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServicePayError, verifySignature } from '../../sdk/src/index.ts';
import { pluginDir } from './support/woo-stack.ts';

interface Vector {
  name: string;
  body: string;
  secrets: string[];
  header: string;
  now: number;
  expect: string;
}

// The same file the plugin's PHPUnit test reads (tests/Webhooks/SignatureVerifierTest.php): SDK and plugin
// must agree on every vector, so a receiver written with either accepts and refuses the same deliveries.
const { vectors } = JSON.parse(
  readFileSync(join(pluginDir, 'tests', 'fixtures', 'signature-vectors.json'), 'utf8'),
) as { vectors: Vector[] };

describe('X-Service-Signature vectors shared by the SDK and the WooCommerce plugin', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('covers acceptance, every refusal reason and rotation', () => {
    expect(new Set(vectors.map((vector) => vector.expect))).toEqual(
      new Set(['ok', 'signature_mismatch', 'timestamp_out_of_tolerance', 'signature_missing']),
    );
    expect(vectors.filter((vector) => vector.name.startsWith('rotation'))).toHaveLength(3);
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))('the SDK agrees: %s', (_name, vector) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(vector.now * 1000);
    let outcome = 'ok';
    try {
      expect(verifySignature(vector.body, vector.header, vector.secrets)).toBe(1_700_000_000);
    } catch (error) {
      if (!(error instanceof ServicePayError)) throw error;
      outcome = error.code.replace(/^webhook_/, '');
    }
    expect(outcome).toBe(vector.expect);
  });
});
