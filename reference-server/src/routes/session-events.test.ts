import { PUSH_RETRY_MS } from '@servicepay/node/protocol';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { call } from '../../../test/support/api.ts';
import { openCheckout, openStream } from '../../../test/support/checkout.ts';
import { type RunningServer, startServer } from '../../../test/support/server.ts';
import { PushStreams } from '../events/push-streams.ts';

let server: RunningServer;
let secretKey: string;

beforeEach(async () => {
  server = await startServer();
  secretKey = (await server.createBusiness()).keys.test.secretKey;
});

afterEach(async () => {
  await server.close();
});

const pushStreams = () => {
  const found = server.service.tasks.find((task): task is PushStreams => task instanceof PushStreams);
  if (!found) throw new Error('push streams are not a task of the service');
  return found;
};

const pay = (accountNumber: string, amount: number) =>
  call(server.baseUrl, 'POST', '/api/test/transfers', { token: secretKey, json: { accountNumber, amount } });

test('the current state comes first, then live transitions, and the stream closes after a terminal status', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const stream = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  expect(stream.response.status).toBe(200);
  expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  await stream.waitFor((frames) => frames.length === 1);
  // Before anything else, the interval a client waits before it reconnects, so it follows the service's.
  expect(stream.retries).toEqual([{ ms: PUSH_RETRY_MS, afterFrames: 0 }]);
  const [first] = stream.frames;
  expect(first?.event).toBe('status');
  expect(first?.data.status).toBe('awaiting_payment');
  expect(first?.data.session.id).toBe(checkout.sessionId);
  expect(first?.data.virtualAccount.accountNumber).toBe(checkout.accountNumber);

  const paid = await pay(checkout.accountNumber, checkout.amount);
  expect(paid.status).toBe(200);
  await stream.closed();
  expect(stream.frames.map((frame) => frame.data.status)).toEqual(['awaiting_payment', 'successful']);
  expect(Number(stream.frames[1]?.id)).toBeGreaterThan(Number(first?.id));
  expect(stream.frames[1]?.data.session.amount).toBe(checkout.amount);
  expect(pushStreams().size).toBe(0);
});

test('a stream opened on a finished session sends its final state and closes', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  await pay(checkout.accountNumber, checkout.amount);
  const stream = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await stream.closed();
  expect(stream.frames).toHaveLength(1);
  expect(stream.frames[0]?.data.status).toBe('successful');
  expect(stream.retries).toEqual([{ ms: PUSH_RETRY_MS, afterFrames: 0 }]);
});

test('resuming with Last-Event-ID replays every missed transition in order, then goes live', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const first = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await first.waitFor((frames) => frames.length === 1);
  const seen = first.frames[0]?.id as string;
  first.abort();
  await first.closed();
  await vi.waitFor(() => expect(pushStreams().size).toBe(0));

  // Missed while disconnected: a transfer of the wrong amount (mismatch).
  const wrong = await pay(checkout.accountNumber, checkout.amount - 1);
  expect(wrong.body.data.returnReason).toBe('amount_mismatch');

  const resumed = await openStream(server.baseUrl, checkout.sessionId, checkout.token, {
    'last-event-id': seen,
  });
  await resumed.waitFor((frames) => frames.length === 1);
  expect(resumed.frames[0]?.data.status).toBe('mismatch');
  expect(resumed.frames[0]?.data.mismatch).toEqual({
    expectedAmount: checkout.amount,
    receivedAmount: checkout.amount - 1,
  });
  await pay(checkout.accountNumber, checkout.amount);
  await resumed.closed();
  expect(resumed.frames.map((frame) => frame.data.status)).toEqual(['mismatch', 'successful']);

  // Every transition after the one the client had, exactly once and in order: compare with the events table.
  const events = await server.service.deps.store.events.forSessionAfter(checkout.sessionId, Number(seen));
  expect(resumed.frames.map((frame) => Number(frame.id))).toEqual(events.map((event) => event.seq));
});

test('two transitions missed while away are both replayed before the final state', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const first = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await first.waitFor((frames) => frames.length === 1);
  const seen = first.frames[0]?.id as string;
  first.abort();
  await pay(checkout.accountNumber, checkout.amount + 5);
  await pay(checkout.accountNumber, checkout.amount);

  const resumed = await openStream(server.baseUrl, checkout.sessionId, checkout.token, {
    'last-event-id': seen,
  });
  await resumed.closed();
  expect(resumed.frames.map((frame) => frame.data.status)).toEqual(['mismatch', 'successful']);
  const events = await server.service.deps.store.events.forSessionAfter(checkout.sessionId, Number(seen));
  expect(resumed.frames.map((frame) => Number(frame.id))).toEqual(events.map((event) => event.seq));
  expect(resumed.frames[0]?.data.virtualAccount.accountNumber).toBe(checkout.accountNumber);
  expect(resumed.frames[1]?.data.virtualAccount).toBeNull();
});

test('heartbeats are comment lines on every open stream', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const stream = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await stream.waitFor((frames) => frames.length === 1);
  pushStreams().heartbeat();
  await stream.waitFor((frames) => frames.some((frame) => frame.comment === 'heartbeat'));
  expect(stream.frames[1]).toEqual({ comment: 'heartbeat' });
  stream.abort();
});

test('one timer sweeps the heartbeat buckets, a slice at a time, each once per interval', () => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
  try {
    const streams = new PushStreams(server.service.deps.store, server.service.deps.broadcaster, {
      heartbeatMs: 1000,
      heartbeatSlices: 4,
    });
    const sweep = vi.spyOn(streams, 'sweep');
    streams.start();
    vi.advanceTimersByTime(3000);
    // Three intervals of four slices: every bucket written three times, by one timer.
    expect(sweep).toHaveBeenCalledTimes(12);
    streams.stop();
    vi.advanceTimersByTime(3000);
    expect(sweep).toHaveBeenCalledTimes(12);
  } finally {
    vi.useRealTimers();
  }
});

test('a client that goes away is forgotten', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const stream = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await stream.waitFor((frames) => frames.length === 1);
  expect(pushStreams().size).toBe(1);
  stream.abort();
  await vi.waitFor(() => expect(pushStreams().size).toBe(0));
});

test('a token in the URL is refused, even with a valid header', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const path = `/api/widget/sessions/${checkout.sessionId}/events`;
  const inUrl = await fetch(new URL(`${path}?token=${checkout.token}`, server.baseUrl));
  expect(inUrl.status).toBe(400);
  expect(((await inUrl.json()) as { meta: { code: string } }).meta.code).toBe('bad_request');
  const both = await fetch(new URL(`${path}?access_token=${checkout.token}`, server.baseUrl), {
    headers: { authorization: `Bearer ${checkout.token}` },
  });
  expect(both.status).toBe(400);
  const none = await fetch(new URL(path, server.baseUrl));
  expect(none.status).toBe(401);
  expect(((await none.json()) as { meta: { code: string } }).meta.code).toBe('authentication_required');
});

test("another session's widget token gets 403; a secret key is not a widget token", async () => {
  const mine = await openCheckout(server.baseUrl, secretKey);
  const other = await openCheckout(server.baseUrl, secretKey);
  const response = await fetch(new URL(`/api/widget/sessions/${mine.sessionId}/events`, server.baseUrl), {
    headers: { authorization: `Bearer ${other.token}` },
  });
  expect(response.status).toBe(403);
  expect(((await response.json()) as { meta: { code: string } }).meta.code).toBe('forbidden');
  const withKey = await fetch(new URL(`/api/widget/sessions/${mine.sessionId}/events`, server.baseUrl), {
    headers: { authorization: `Bearer ${secretKey}` },
  });
  expect(withKey.status).toBe(401);
});
