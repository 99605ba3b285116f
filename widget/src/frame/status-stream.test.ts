import { PUSH_RETRY_MS } from '@servicepay/node/protocol';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_MS, reconnectDelay } from './status-stream.ts';

// The widget reconnects on the service's schedule: the `retry:` every push stream opens with
// (docs/protocol.md, "Push stream"), doubling, three times, then `lost` (the payer's button, the browser coming
// online or the tab coming back try again). test/contract/widget-status-stream.test.ts reads it off the
// reference server's stream.

describe('reconnectDelay', () => {
  it("waits the service's interval, then twice and four times it, then gives up", () => {
    const most = () => 0;
    expect([0, 1, 2, 3].map((attempt) => reconnectDelay(attempt, PUSH_RETRY_MS, most))).toEqual([
      1_000,
      2_000,
      4_000,
      undefined,
    ]);
    // Up to 25 % shorter at random, never longer.
    expect(reconnectDelay(0, 1_000, () => 1)).toBe(750);
  });

  it('keeps a retry: a stream sent within 250 ms and 10 s', () => {
    expect(reconnectDelay(0, 0, () => 0)).toBe(250);
    expect(reconnectDelay(0, 600_000, () => 0)).toBe(10_000);
  });

  it("defaults, before any stream said, to the service's own value", () => {
    expect(DEFAULT_RETRY_MS).toBe(PUSH_RETRY_MS);
  });
});
