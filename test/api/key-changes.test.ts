import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError, sessionParams } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// A key the service has answered before is remembered (SQLite: checked against its change counter on every
// request; PostgreSQL: confirmed by the credentials version the request's rate-limit hit reads, issue 38). What a
// merchant relies on either way: a key rolled or a business approved, by the service or by anyone writing to its
// database, is seen by the very next request. These change the rows from outside the service's code
// (`server.rows`: on PostgreSQL a connection of its own), after the key was used and so remembered.

let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server.close();
});

const list = (token: string, environment: 'test' | 'live' = 'test') =>
  call(server.baseUrl, 'GET', `/api/widget/sessions?limit=1&environment=${environment}`, { token });

describe('a key the service remembers', () => {
  it('answers 401 api_key_revoked at the very next request once revoked in the database', async () => {
    const created = await server.createBusiness({ name: 'Revoked Outside' });
    const key = created.keys.test.secretKey;
    for (let i = 0; i < 3; i++) expect((await list(key)).status).toBe(200);

    await server.rows(
      "UPDATE api_keys SET revoked_at = ? WHERE business_id = ? AND environment = 'test' AND kind = 'secret'",
      Date.now(),
      created.business.id,
    );

    expectError(await list(key), 401, 'api_key_revoked');
    // And a create, the route that spends the budget first, is refused the same way.
    const create = await call(server.baseUrl, 'POST', '/api/widget/sessions', {
      token: key,
      json: sessionParams(),
    });
    expectError(create, 401, 'api_key_revoked');
    const [sessions] = await server.rows<{ n: number }>(
      'SELECT count(*) AS n FROM sessions WHERE business_id = ?',
      created.business.id,
    );
    expect(sessions?.n).toBe(0);
  });

  it('lets a live key in at the very next request once its business is approved in the database', async () => {
    const created = await server.createBusiness({ name: 'Approved Outside' });
    const live = created.keys.live.secretKey;
    for (let i = 0; i < 2; i++) expectError(await list(live, 'live'), 403, 'kyc_required');

    await server.rows("UPDATE businesses SET kyc_status = 'approved' WHERE id = ?", created.business.id);

    const answer = await list(live, 'live');
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual([]);
  });
});
