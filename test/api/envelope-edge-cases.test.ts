import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, createSession, rawCall } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Edge cases of the rule (docs/protocol.md, Conventions) that every response is JSON in the envelope `{ meta: { statusCode, message } }`:
// requests express never routes (OPTIONS), bodies on a GET, and request lines Node itself cannot parse.

let server: RunningServer;
let sessionId: string;

beforeAll(async () => {
  server = await startServer();
  const key = (await server.createBusiness()).keys.test.secretKey;
  const created = await createSession(server.baseUrl, key);
  await bootstrap(server.baseUrl, created.clientSecret);
  sessionId = created.id;
});

afterAll(async () => {
  await server.close();
});

function expectEnvelope(response: { status: number; headers: Record<string, unknown>; text: string }) {
  expect(String(response.headers['content-type'] ?? '')).toMatch(/^application\/json/);
  const body = JSON.parse(response.text) as { meta: { statusCode: number; message: unknown } };
  expect(body.meta.statusCode).toBe(response.status);
  expect(typeof body.meta.message).toBe('string');
}

describe('answers outside the routes, in the envelope', () => {
  it('OPTIONS on a secret-key route answers 404 in the envelope, with no CORS headers', async () => {
    const response = await rawCall(server.baseUrl, 'OPTIONS', '/api/widget/sessions', {});
    expect(response.status).toBe(404);
    expectEnvelope(response);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a preflight for a checkout route from a widget host answers 204 for that origin only', async () => {
    const response = await rawCall(server.baseUrl, 'OPTIONS', `/api/widget/sessions/${sessionId}/events`, {
      origin: server.widgetUrls.test,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization,last-event-id',
    });
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(server.widgetUrls.test);
    expect(String(response.headers.vary)).toMatch(/Origin/);
    expect(String(response.headers['access-control-allow-headers'])).toMatch(/Authorization/);
    expect(String(response.headers['access-control-allow-headers'])).toMatch(/Last-Event-ID/);
  });

  it('a preflight for a checkout route from any other origin answers 403 in the envelope, no CORS headers', async () => {
    for (const origin of ['https://evil.example', 'null', server.baseUrl]) {
      const response = await rawCall(server.baseUrl, 'OPTIONS', '/api/widget/bootstrap', {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      });
      expect(response.status).toBe(403);
      expectEnvelope(response);
      expect(JSON.parse(response.text).meta.code).toBe('forbidden');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('GET of the push stream with a framed body and no token answers 401 in the envelope', async () => {
    const response = await rawCall(
      server.baseUrl,
      'GET',
      `/api/widget/sessions/${sessionId}/events`,
      { 'content-type': 'application/json', 'content-length': '2' },
      Buffer.from('{}'),
    );
    expect(response.status).toBe(401);
    expectEnvelope(response);
    expect(JSON.parse(response.text).meta.code).toBe('authentication_required');
  });

  it('a request line that is not valid HTTP is answered 400 in the envelope', async () => {
    const response = await rawCall(server.baseUrl, 'GET', '/api/widget/profile/\u00e9', {});
    expect(response.status).toBe(400);
    expectEnvelope(response);
  });
});
