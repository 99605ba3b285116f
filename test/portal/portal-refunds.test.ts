import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createSession, paySession, retrieveSession } from '../support/api.ts';
import { PortalClient } from '../support/portal-client.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 26: a successful session's page refunds it, in two steps (review, then confirm), with the session's
// CSRF token, through the same service as the API; the refund shows on the page, in the bank's books and in the
// audit log under the portal session's key.

let server: RunningServer;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
  shop = await server.createBusiness({ name: 'Portal Refund Shop', kycApproved: true });
});

afterAll(async () => {
  await server?.close();
});

async function signedIn(key = shop.keys.test.secretKey) {
  const client = new PortalClient(server.baseUrl);
  expect((await client.signIn(key)).status).toBe(303);
  return client;
}

const payerCredits = (sessionId: string) =>
  server.bankRows<{ amount: number; outcome: string }>(
    'SELECT p.amount, p.outcome FROM bank_payer_refunds p JOIN refunds r ON r.id = p.id WHERE r.session_id = ? ORDER BY p.created_at',
    sessionId,
  );

describe("the session page's Refund form", () => {
  it('reviews, then refunds once confirmed; a second press of the confirm refunds nothing more', async () => {
    const key = shop.keys.test.secretKey;
    const paid = await paySession(server.baseUrl, key, { amount: 80_000 });
    const client = await signedIn();
    const page = await client.request('GET', `/portal/sessions/${paid.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('No refunds yet.');
    expect(page.text).toContain(`action="/portal/sessions/${paid.id}/refunds"`);

    const review = await client.request('POST', `/portal/sessions/${paid.id}/refunds`, {
      _csrf: client.token,
      step: 'review',
      amount: '30000',
      reason: 'requested_by_customer',
    });
    expect(review.status).toBe(200);
    expect(review.text).toMatch(/Send <strong>NGN.300\.00<\/strong> back to the account/);
    expect(review.text).toContain('name="expectedRefunded" value="0"');
    // Reviewing moved nothing.
    expect(await payerCredits(paid.id)).toEqual([]);

    const confirm = {
      _csrf: client.token,
      step: 'confirm',
      amount: '30000',
      reason: 'requested_by_customer',
      expectedRefunded: '0',
    };
    const done = await client.request('POST', `/portal/sessions/${paid.id}/refunds`, confirm);
    expect(done.status).toBe(303);
    const location = done.headers.get('location') ?? '';
    expect(location).toMatch(new RegExp(`^/portal/sessions/${paid.id}\\?refund=rfd_`));
    const after = await client.request('GET', location);
    expect(after.text).toContain("the payer's account has it back");
    expect(after.text).toContain('Requested by the customer');
    expect(await payerCredits(paid.id)).toEqual([{ amount: 30_000, outcome: 'credited' }]);

    // The same confirm again (a double click, a resubmitted post): refused, nothing more moves.
    const twice = await client.request('POST', `/portal/sessions/${paid.id}/refunds`, confirm);
    expect(twice.status).toBe(409);
    expect(twice.text).toContain('changed since this refund was reviewed');
    expect(await payerCredits(paid.id)).toHaveLength(1);
    expect((await retrieveSession(server.baseUrl, key, paid.id)).amountRefunded).toBe(30_000);

    const [keyRow] = await server.rows<{ id: string }>(
      "SELECT id FROM api_keys WHERE business_id = ? AND environment = 'test' AND kind = 'secret' AND revoked_at IS NULL",
      shop.business.id,
    );
    const audit = await server.rows<{ actor: string; action: string }>(
      "SELECT actor, action FROM audit_log WHERE action = 'refund.requested' AND details LIKE ?",
      `%${paid.id}%`,
    );
    expect(audit).toEqual([{ actor: `portal:${keyRow?.id}`, action: 'refund.requested' }]);
  });

  it("shows the service's message when it refuses, and needs the session's CSRF token", async () => {
    const key = shop.keys.test.secretKey;
    const paid = await paySession(server.baseUrl, key, { amount: 10_000 });
    const client = await signedIn();
    await client.request('GET', `/portal/sessions/${paid.id}`);
    const tooMuch = await client.request('POST', `/portal/sessions/${paid.id}/refunds`, {
      _csrf: client.token,
      step: 'review',
      amount: '10001',
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.text).toContain('At most NGN 100.00 (amount 10000)');
    const forged = await client.request('POST', `/portal/sessions/${paid.id}/refunds`, {
      _csrf: 'not-the-token',
      step: 'confirm',
      amount: '100',
      expectedRefunded: '0',
    });
    expect(forged.status).toBe(403);
    const open = await createSession(server.baseUrl, key);
    const unpaid = await client.request('POST', `/portal/sessions/${open.id}/refunds`, {
      _csrf: client.token,
      step: 'review',
      amount: '',
    });
    expect(unpaid.status).toBe(409);
    expect(unpaid.text).toContain('Only a successful session can be refunded.');
    expect(await payerCredits(paid.id)).toEqual([]);
  });

  it('refunds live money only for a business that passed KYC review', async () => {
    const live = await server.createBusiness({ name: 'Unreviewed Shop', kycApproved: true });
    const session = await createSession(server.baseUrl, live.keys.live.secretKey);
    // The review is withdrawn (an operator's correction): live money stays where it is.
    await server.rows("UPDATE businesses SET kyc_status = 'pending' WHERE id = ?", live.business.id);
    const client = await signedIn(live.keys.live.secretKey);
    await client.request('GET', '/portal/kyc');
    const refused = await client.request('POST', `/portal/sessions/${session.id}/refunds`, {
      _csrf: client.token,
      step: 'review',
      amount: '100',
    });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('<code class="error-code">kyc_required</code>');
    const api = await call(server.baseUrl, 'POST', `/api/widget/sessions/${session.id}/refunds`, {
      token: live.keys.live.secretKey,
      json: {},
    });
    expect(api.status).toBe(403);
    expect(api.body.meta.code).toBe('kyc_required');
  });
});
