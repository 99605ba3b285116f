import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SessionStatus } from '@servicepay/node/protocol';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { testTransfer } from '../../../test/support/api.ts';
import { openCheckout, openStream } from '../../../test/support/checkout.ts';
import { type RunningServer, startServer } from '../../../test/support/server.ts';
import { UnappliedCredits } from '../bank/unapplied-credits.ts';
import type { InProcessBroadcaster, SessionUpdate } from '../db/broadcaster.ts';
import { SessionLifecycle, type TransitionOptions } from '../sessions/session-lifecycle.ts';
import { PushStreams } from './push-streams.ts';

let server: RunningServer;
let secretKey: string;

beforeEach(async () => {
  server = await startServer();
  secretKey = (await server.createBusiness()).keys.test.secretKey;
});

afterEach(async () => {
  vi.restoreAllMocks();
  await server.close();
});

/** A test-mode transfer to the checkout's account (the shared helper asserts the bank answered 200). */
const pay = (accountNumber: string, amount: number) =>
  testTransfer(server.baseUrl, secretKey, accountNumber, amount);

/**
 * Commits a transition through the service's own transition code and its write queue (as another instance's
 * commit can land at any moment), which publishes it after the commit. The tests call it from inside a read of
 * the stream being opened, which waits for it: the commit lands exactly between two steps of the stream's start.
 */
async function commitNow(
  sessionId: string,
  to: SessionStatus,
  options: Omit<TransitionOptions, 'now'>,
): Promise<void> {
  const { store, bank, broadcaster, logger, clock } = server.service.deps;
  const outbox = server.service.outbox;
  const lifecycle = new SessionLifecycle(
    outbox,
    broadcaster,
    bank,
    new UnappliedCredits(store, outbox, bank, clock, logger),
  );
  await store.writes.run(async (tx, context) => {
    const session = await tx.sessions.find(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    await lifecycle.transition(tx, context, session, to, { now: Date.now(), ...options });
  });
}

/** Every status frame's seq appears once, in increasing order, and they are exactly the session's events from the first. */
async function expectEachEventOnceInOrder(ids: number[], sessionId: string): Promise<void> {
  const events = (await server.service.deps.store.events.forSessionAfter(sessionId, 0)).map(
    (event) => event.seq,
  );
  const first = ids[0] ?? 0;
  expect(ids).toEqual(events.filter((seq) => seq >= first));
}

test('a transition committed after the stream subscribed, before it read the events table, is sent once', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const { events } = server.service.deps.store;
  const lastForSession = events.lastForSession.bind(events);
  vi.spyOn(events, 'lastForSession').mockImplementationOnce(async (sessionId) => {
    // The race: committed and published while the stream is subscribed (it subscribes first) but has not read
    // anything yet. It is in what the stream reads AND delivered to it live.
    await commitNow(sessionId, 'mismatch', { mismatchReceived: checkout.amount - 1 });
    return lastForSession(sessionId);
  });

  const stream = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await stream.waitFor((frames) => frames.length === 1);
  expect(stream.frames[0]?.data.status).toBe('mismatch');
  await pay(checkout.accountNumber, checkout.amount);
  await stream.closed();
  expect(stream.frames.map((frame) => frame.data.status)).toEqual(['mismatch', 'successful']);
  await expectEachEventOnceInOrder(
    stream.frames.map((frame) => Number(frame.id)),
    checkout.sessionId,
  );
});

test('a transition committed after the stream read the events table, before its first frame, is sent after it', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const { events } = server.service.deps.store;
  const lastForSession = events.lastForSession.bind(events);
  vi.spyOn(events, 'lastForSession').mockImplementationOnce(async (sessionId) => {
    const last = await lastForSession(sessionId);
    // The race that a stream which read and then subscribed lost: committed and published after the read.
    await commitNow(sessionId, 'mismatch', { mismatchReceived: checkout.amount + 7 });
    return last;
  });

  const stream = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await stream.waitFor((frames) => frames.length === 2);
  expect(stream.frames.map((frame) => frame.data.status)).toEqual(['awaiting_payment', 'mismatch']);
  expect(stream.frames[1]?.data.mismatch).toEqual({
    expectedAmount: checkout.amount,
    receivedAmount: checkout.amount + 7,
  });
  await pay(checkout.accountNumber, checkout.amount);
  await stream.closed();
  expect(stream.frames.map((frame) => frame.data.status)).toEqual([
    'awaiting_payment',
    'mismatch',
    'successful',
  ]);
  await expectEachEventOnceInOrder(
    stream.frames.map((frame) => Number(frame.id)),
    checkout.sessionId,
  );
});

test('a resuming stream gets a transition committed while it replays once, after what it missed', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const first = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await first.waitFor((frames) => frames.length === 1);
  const seen = first.frames[0]?.id as string;
  first.abort();
  await vi.waitFor(() => expect(server.service.deps.pushStreams.size).toBe(0));
  await pay(checkout.accountNumber, checkout.amount - 1); // missed while away

  const { events } = server.service.deps.store;
  const forSessionAfter = events.forSessionAfter.bind(events);
  vi.spyOn(events, 'forSessionAfter').mockImplementationOnce(async (sessionId, seq) => {
    const missed = await forSessionAfter(sessionId, seq);
    await commitNow(sessionId, 'mismatch', { mismatchReceived: checkout.amount - 2 });
    return missed;
  });
  const resumed = await openStream(server.baseUrl, checkout.sessionId, checkout.token, {
    'last-event-id': seen,
  });
  await resumed.waitFor((frames) => frames.length === 2);
  expect(resumed.frames.map((frame) => frame.data.mismatch?.receivedAmount)).toEqual([
    checkout.amount - 1,
    checkout.amount - 2,
  ]);
  await pay(checkout.accountNumber, checkout.amount);
  await resumed.closed();
  expect(resumed.frames.map((frame) => frame.data.status)).toEqual(['mismatch', 'mismatch', 'successful']);
  await expectEachEventOnceInOrder(
    resumed.frames.map((frame) => Number(frame.id)),
    checkout.sessionId,
  );
});

test('an update delivered twice and late (as from another instance) reaches each stream once, in order', async () => {
  const checkout = await openCheckout(server.baseUrl, secretKey);
  const { broadcaster } = server.service.deps;
  const publish = broadcaster.publish.bind(broadcaster);
  // Every update arrives 30 ms after its commit, and then once more.
  vi.spyOn(broadcaster, 'publish').mockImplementation((update: SessionUpdate) => {
    setTimeout(() => {
      publish(update);
      publish(update);
    }, 30);
  });
  const early = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await early.waitFor((frames) => frames.length === 1);

  const wrong = await pay(checkout.accountNumber, checkout.amount - 1);
  expect(wrong.returnReason).toBe('amount_mismatch');
  // Opened after the commit, before its (late) delivery: it reads the mismatch from the table, and must not
  // send it again when the delivery comes.
  const late = await openStream(server.baseUrl, checkout.sessionId, checkout.token);
  await late.waitFor((frames) => frames.length === 1);
  await early.waitFor((frames) => frames.length === 2);
  await new Promise((resolve) => setTimeout(resolve, 60)); // both deliveries are in

  await pay(checkout.accountNumber, checkout.amount);
  await Promise.all([early.closed(), late.closed()]);
  expect(early.frames.map((frame) => frame.data.status)).toEqual([
    'awaiting_payment',
    'mismatch',
    'successful',
  ]);
  expect(late.frames.map((frame) => frame.data.status)).toEqual(['mismatch', 'successful']);
  await expectEachEventOnceInOrder(
    early.frames.map((frame) => Number(frame.id)),
    checkout.sessionId,
  );
  await expectEachEventOnceInOrder(
    late.frames.map((frame) => Number(frame.id)),
    checkout.sessionId,
  );
});

/** A PushStreams of the test's own (its timer not started) behind a bare HTTP server over the service's store. */
async function ownStreams(heartbeatMs: number, heartbeatSlices: number) {
  const streams = new PushStreams(server.service.deps.store, server.service.deps.broadcaster, {
    heartbeatMs,
    heartbeatSlices,
  });
  const http: Server = createServer((req, res) => {
    const sessionId = /^\/api\/widget\/sessions\/([^/]+)\/events$/.exec(req.url ?? '')?.[1] ?? '';
    void streams.open(res, sessionId, undefined);
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  return {
    streams,
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    async close() {
      streams.stop();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

test('heartbeats are spread: the streams share the buckets, a round of sweeps reaches each stream once', async () => {
  const own = await ownStreams(3000, 4);
  try {
    const opened: Array<Awaited<ReturnType<typeof openStream>>> = [];
    for (let i = 0; i < 6; i++) {
      const checkout = await openCheckout(server.baseUrl, secretKey);
      const stream = await openStream(own.url, checkout.sessionId, checkout.token);
      await stream.waitFor((frames) => frames.length === 1);
      opened.push(stream);
    }
    // Six streams opened together land in the half of the wheel swept last, evenly: no sweep writes to all.
    expect(own.streams.heartbeatBuckets).toEqual([0, 0, 3, 3]);
    const beats = () =>
      opened.map((stream) => stream.frames.filter((frame) => frame.comment === 'heartbeat').length);

    for (let i = 0; i < 4; i++) own.streams.sweep();
    await vi.waitFor(() => expect(beats()).toEqual([1, 1, 1, 1, 1, 1]));
    for (let i = 0; i < 4; i++) own.streams.sweep();
    await vi.waitFor(() => expect(beats()).toEqual([2, 2, 2, 2, 2, 2]));

    // A stream that goes leaves its bucket; the others keep theirs, and a new one fills the gap.
    opened[0]?.abort();
    await vi.waitFor(() => expect(own.streams.size).toBe(5));
    expect(own.streams.heartbeatBuckets).toEqual([0, 0, 3, 2]);
    const checkout = await openCheckout(server.baseUrl, secretKey);
    const another = await openStream(own.url, checkout.sessionId, checkout.token);
    await another.waitFor((frames) => frames.length === 1);
    expect(own.streams.heartbeatBuckets).toEqual([0, 0, 3, 3]);
    for (let i = 0; i < 4; i++) own.streams.sweep();
    await vi.waitFor(() => expect(beats().slice(1)).toEqual([3, 3, 3, 3, 3]));
    await another.waitFor((frames) => frames.some((frame) => frame.comment === 'heartbeat'));
  } finally {
    await own.close();
  }
});

test('a stream that ends at once (finished session) is in no bucket and holds no place', async () => {
  const own = await ownStreams(3000, 3);
  try {
    const checkout = await openCheckout(server.baseUrl, secretKey);
    await pay(checkout.accountNumber, checkout.amount);
    const stream = await openStream(own.url, checkout.sessionId, checkout.token);
    await stream.closed();
    expect(stream.frames.map((frame) => frame.data.status)).toEqual(['successful']);
    expect(own.streams.size).toBe(0);
    // It subscribed before reading, and let go when it ended.
    expect((server.service.deps.broadcaster as InProcessBroadcaster).watchedSessions).toBe(0);
  } finally {
    await own.close();
  }
});
