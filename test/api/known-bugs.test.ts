import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap, createSession, rawCall } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Failing cases the tests found, kept here (not skipped) until they are fixed; each names request, expected and
// actual. Design §2: every response is JSON in the envelope `{ meta: { statusCode, message } }`.

let server: RunningServer;
let sessionId: string;

beforeAll(async () => {
  server = await startServer();
  const key = server.createBusiness().keys.test.secretKey;
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

describe('known bugs', () => {
  // OPTIONS /api/widget/sessions → expected an enveloped JSON answer (e.g. 404/405, or a CORS preflight answer);
  // actual: express's automatic OPTIONS response, 200 text/plain "GET, HEAD, POST". Owner: reference-server core
  // (app.ts). Note: there is no CORS handling at all, so a cross-origin preflight from the widget host gets this.
  it('OPTIONS on an API route answers in the envelope', async () => {
    const response = await rawCall(server.baseUrl, 'OPTIONS', '/api/widget/sessions', {});
    expectEnvelope(response);
  });

  // GET /api/widget/sessions/{id}/events with a chunked request body (Transfer-Encoding: chunked, body "{}", no
  // Authorization) → expected 401 authentication_required in the envelope, as every other GET route answers;
  // actual: 400 with no body and only `Connection: close`. Owner: push stream (routes/session-events.ts,
  // events/push-streams.ts).
  it('GET of the push stream with a request body answers in the envelope', async () => {
    const response = await rawCall(
      server.baseUrl,
      'GET',
      `/api/widget/sessions/${sessionId}/events`,
      {},
      Buffer.from('{}'),
    );
    expectEnvelope(response);
  });

  // A request line with raw bytes above 0x7f (`GET /api/widget/profile/\xe9 HTTP/1.1`) → expected 400 in the
  // envelope; actual: Node's default clientError answer, 400 with no body. Fix: a `clientError` handler on the
  // http.Server in service.ts that writes the 400 envelope (and 431 for oversized headers) before closing.
  it('a request line that is not valid HTTP is answered in the envelope', async () => {
    const response = await rawCall(server.baseUrl, 'GET', '/api/widget/profile/\u00e9', {});
    expectEnvelope(response);
  });
});
