import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { call } from '../support/api.ts';
import { PortalClient } from '../support/portal-client.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';
import { startServer } from '../support/server.ts';

// Issue 35: the portal's errors go through the API's classifier. While PostgreSQL is down, a signed-in portal
// page answers 503 with `Retry-After`, as a page (before: 500, "Something went wrong"), as the API answers 503
// in its envelope; once the database is back the same session's page answers 200 by itself. A real PostgreSQL
// stopped mid-session and started again, as test/postgres/health.test.ts does for /health.

reportIfPostgresMissing();

describe.runIf(postgresAvailable)('a portal page while PostgreSQL is down', () => {
  const scratch = useScratchDatabase();
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-portal-outage-'));

  afterAll(async () => {
    rmSync(folder, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After as a page, and the same session its page again once PostgreSQL is back', async () => {
    const databaseUrl = await scratch.postgres.createDatabase('portal_outage');
    const server = await startServer({ databaseUrl }, { dbPath: join(folder, 'portal.db') });
    try {
      const shop = await server.createBusiness({ name: 'Outage Shop' });
      const portal = new PortalClient(server.baseUrl);
      expect((await portal.signIn(shop.keys.test.secretKey)).status).toBe(303);
      const keys = await portal.request('GET', '/portal/keys');
      expect(keys.status).toBe(200);

      const restarting = scratch.postgres.restart({ downMs: 3_000 });
      await vi.waitFor(async () => expect((await portal.request('GET', '/portal/keys')).status).toBe(503), {
        timeout: 5_000,
        interval: 50,
      });
      const page = await portal.request('GET', '/portal/keys');
      expect(page.status).toBe(503);
      expect(page.headers.get('retry-after')).toBe('1');
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.text).toContain('cannot reach its database');
      expect(page.text).toContain('<code class="error-code">service_unavailable</code>');
      // A form post meets the same answer, and nothing is changed.
      const roll = await portal.request('POST', '/portal/keys/roll', {
        _csrf: portal.token,
        environment: 'test',
        kind: 'publishable',
        confirm: 'yes',
      });
      expect(roll.status).toBe(503);
      expect(roll.headers.get('retry-after')).toBe('1');
      // The API, meanwhile, answers the same status in its envelope.
      const api = await call(server.baseUrl, 'GET', '/api/widget/sessions', {
        token: shop.keys.test.secretKey,
      });
      expect(api.status).toBe(503);
      expect(api.body.meta.code).toBe('service_unavailable');
      expect(api.headers.get('retry-after')).toBe('1');

      await restarting;
      // No restart of the service and no new sign-in: the pool connects again, the session is still there.
      await vi.waitFor(async () => expect((await portal.request('GET', '/portal/keys')).status).toBe(200), {
        timeout: 15_000,
        interval: 100,
      });
      const after = await portal.request('GET', '/portal/keys');
      expect(after.text).toContain(shop.keys.test.publishableKey.slice(-4));
    } finally {
      await server.close();
    }
  });
});
