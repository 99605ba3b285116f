import { afterEach, describe, expect, it } from 'vitest';
import { PushStreams } from '../../reference-server/src/events/push-streams.ts';
import { ManualClock } from '../../reference-server/src/index.ts';
import { bootstrap, call, createSession, expectError, rawCall, sendRaw } from '../support/api.ts';
import { openStream } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 8, "The checkout's routes face untrusted browsers": at most ten push streams per widget token and a cap
// per address, HEAD answered and ended, a widget token's expiresAt checked, and a credential in the URL refused
// however often its parameter appears.

let server: RunningServer | undefined;
const streams: Array<{ abort(): void }> = [];

afterEach(async () => {
  for (const stream of streams.splice(0)) stream.abort();
  await server?.close();
  server = undefined;
});

const pushStreamsOf = (running: RunningServer): PushStreams => {
  const found = running.service.tasks.find((task): task is PushStreams => task instanceof PushStreams);
  if (!found) throw new Error('the push streams are not a task of the service');
  return found;
};

async function checkout(running: RunningServer, secretKey: string) {
  const created = await createSession(running.baseUrl, secretKey);
  const opened = await bootstrap(running.baseUrl, created.clientSecret);
  return { sessionId: created.id, token: opened.token, expiresAt: opened.session.expiresAt };
}

const eventsPath = (sessionId: string) => `/api/widget/sessions/${sessionId}/events`;

describe('push streams per widget token and per address', () => {
  it('a token holds at most ten open streams; the eleventh is 429 in the envelope until one closes', async () => {
    server = await startServer();
    const { secretKey } = (await server.createBusiness()).keys.test;
    const { sessionId, token } = await checkout(server, secretKey);
    const open = [];
    for (let i = 0; i < 10; i++) {
      const stream = await openStream(server.baseUrl, sessionId, token);
      streams.push(stream);
      expect(stream.response.status).toBe(200);
      await stream.waitFor((frames) => frames.length > 0);
      open.push(stream);
    }
    expect(pushStreamsOf(server).size).toBe(10);
    const eleventh = await call(server.baseUrl, 'GET', eventsPath(sessionId), { token });
    expectError(eleventh, 429, 'rate_limited');
    expect(eleventh.headers.get('retry-after')).toBe('5');
    expect(eleventh.headers.get('request-id')).toMatch(/^req_/);
    expect(pushStreamsOf(server).size).toBe(10);

    // Another checkout from the same address is not held back by this token's cap.
    const other = await checkout(server, secretKey);
    const otherStream = await openStream(server.baseUrl, other.sessionId, other.token);
    streams.push(otherStream);
    expect(otherStream.response.status).toBe(200);

    // One closes (the browser navigated away): its place is free again.
    open[0]?.abort();
    await expect.poll(() => pushStreamsOf(server as RunningServer).size).toBe(10);
    const again = await openStream(server.baseUrl, sessionId, token);
    streams.push(again);
    expect(again.response.status).toBe(200);
  });

  it('an address holds at most streamsPerAddress streams across tokens', async () => {
    server = await startServer({ rateLimit: { streamsPerAddress: 3 } });
    const { secretKey } = (await server.createBusiness()).keys.test;
    const checkouts = await Promise.all([0, 1, 2, 3].map(() => checkout(server as RunningServer, secretKey)));
    for (const { sessionId, token } of checkouts.slice(0, 3)) {
      const stream = await openStream(server.baseUrl, sessionId, token);
      streams.push(stream);
      expect(stream.response.status).toBe(200);
    }
    const fourth = checkouts[3];
    if (!fourth) throw new Error('four checkouts were opened');
    expectError(
      await call(server.baseUrl, 'GET', eventsPath(fourth.sessionId), { token: fourth.token }),
      429,
      'rate_limited',
    );
  });

  it('a stream that ends with its session (terminal status) frees its place', async () => {
    server = await startServer({ rateLimit: { streamsPerWidgetToken: 1 } });
    const { secretKey } = (await server.createBusiness()).keys.test;
    const { sessionId, token } = await checkout(server, secretKey);
    const stream = await openStream(server.baseUrl, sessionId, token);
    streams.push(stream);
    await stream.waitFor((frames) => frames.length > 0);
    expect(
      (await call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/cancel`, { token })).status,
    ).toBe(200);
    await stream.closed();
    expect(pushStreamsOf(server).size).toBe(0);
    // The finished session's stream answers its final state and closes, so it needs no place.
    const final = await openStream(server.baseUrl, sessionId, token);
    await final.closed();
    expect(final.frames.at(-1)?.data?.status).toBe('cancelled');
  });
});

describe('HEAD on the push stream', () => {
  it('answers the stream’s headers and ends, holding no subscription', async () => {
    server = await startServer();
    const { secretKey } = (await server.createBusiness()).keys.test;
    const { sessionId, token } = await checkout(server, secretKey);
    const head = await rawCall(server.baseUrl, 'HEAD', eventsPath(sessionId), {
      authorization: `Bearer ${token}`,
    });
    expect(head.status).toBe(200);
    expect(String(head.headers['content-type'])).toMatch(/^text\/event-stream/);
    expect(head.headers['request-id']).toMatch(/^req_/);
    expect(pushStreamsOf(server).size).toBe(0);
    // A hundred of them cost nothing that stays.
    for (let i = 0; i < 100; i++) {
      await call(server.baseUrl, 'HEAD', eventsPath(sessionId), { token });
    }
    expect(pushStreamsOf(server).size).toBe(0);
    // HEAD checks the token like GET does.
    const without = await rawCall(server.baseUrl, 'HEAD', eventsPath(sessionId), {});
    expect(without.status).toBe(401);
  });
});

describe('HEAD on the push stream with Connection: close', () => {
  it('answers Connection: close and closes the connection at once, as for any other request', async () => {
    server = await startServer();
    const { secretKey } = (await server.createBusiness()).keys.test;
    const { sessionId, token } = await checkout(server, secretKey);
    // Held 5 s or more when the stream's own Connection: keep-alive overrode the client's close; a second is
    // far more than closing at once takes.
    const { answer, closedByServer } = await sendRaw(
      server.baseUrl,
      `HEAD ${eventsPath(sessionId)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
        'Connection: close\r\n\r\n',
    );
    expect(closedByServer).toBe(true);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(answer.toLowerCase()).toContain('\r\ncontent-type: text/event-stream');
    expect(pushStreamsOf(server).size).toBe(0);
  });
});

describe('a widget token’s expiresAt', () => {
  it('after it, the token opens nothing: 401 widget_token_expired on the stream, accounts and cancel', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    server = await startServer({ sweepIntervalMs: 3_600_000 }, { clock });
    const { secretKey } = (await server.createBusiness()).keys.test;
    const { sessionId, token, expiresAt } = await checkout(server, secretKey);
    // Just before: it works.
    clock.advance(Date.parse(expiresAt) - 1 - clock.now());
    expect((await call(server.baseUrl, 'HEAD', eventsPath(sessionId), { token })).status).toBe(200);
    clock.advance(1);
    expectError(
      await call(server.baseUrl, 'GET', eventsPath(sessionId), { token }),
      401,
      'widget_token_expired',
    );
    expectError(
      await call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/accounts`, { token }),
      401,
      'widget_token_expired',
    );
    expectError(
      await call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/cancel`, { token }),
      401,
      'widget_token_expired',
    );
  });
});

describe('a credential in the stream URL', () => {
  it('is refused however many times its parameter appears, and wherever in a value it sits', async () => {
    server = await startServer();
    const { secretKey } = (await server.createBusiness()).keys.test;
    const { sessionId, token } = await checkout(server, secretKey);
    for (const query of [
      `x=${token}`,
      `x=${token}&x=${token}`,
      `x=1&x=${token}`,
      `token=a&token=b`,
      `x[]=${token}`,
      `x=Bearer%20${token}`,
      `x=${secretKey}`,
      `${token}=1`,
    ]) {
      const response = await call(server.baseUrl, 'GET', `${eventsPath(sessionId)}?${query}`, { token });
      expectError(response, 400, 'bad_request');
    }
    expect(pushStreamsOf(server).size).toBe(0);
    // A harmless query still opens the stream.
    const fine = await openStream(server.baseUrl, sessionId, token);
    streams.push(fine);
    expect(fine.response.status).toBe(200);
  });
});
