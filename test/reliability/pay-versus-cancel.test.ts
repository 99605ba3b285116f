import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call } from '../support/api.ts';
import { independentlyVerify, openCheckout, startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// The adversarial probe's race: a payer's transfer at the bank and a cancel sent together. The bank's books are
// the truth about money, so whichever wins, no credited transfer may sit on a cancelled session.

let server: RunningServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let sk: string;
let secret: string;

beforeAll(async () => {
  server = await startServer({ rateLimit: { perMinute: 10_000, widgetPerMinutePerAddress: 10_000 } });
  receiver = await startReceiver();
  sk = (await server.createBusiness({ name: 'Race Shop' })).keys.test.secretKey;
  const endpoint = await call(server.baseUrl, 'POST', '/api/webhooks', {
    token: sk,
    json: { url: receiver.url },
  });
  secret = endpoint.body.data.secret;
});

afterAll(async () => {
  await receiver.close();
  await server.close();
});

type BankTransferRow = { id: string; amount: number; outcome: string; refunded: number };

/** What the bank's own books say happened on an account: every transfer, and whether it was refunded. */
const bankBooks = (accountNumber: string) =>
  server.bankRows<BankTransferRow>(
    `SELECT t.id, t.amount, t.outcome,
            CASE WHEN EXISTS (SELECT 1 FROM bank_refunds r WHERE r.transfer_id = t.id) THEN 1 ELSE 0 END
              AS refunded
     FROM bank_transfers t WHERE t.account_number = ? ORDER BY t.created_at`,
    accountNumber,
  );

const terminalEvents = (sessionId: string) =>
  server.rows<{ id: string; type: string }>(
    `SELECT id, type FROM events WHERE session_id = ?
       AND type IN ('session.successful', 'session.cancelled', 'session.expired') ORDER BY seq`,
    sessionId,
  );

describe('a transfer and a payer cancel sent together, 20 times', () => {
  it('never leaves a credited transfer on a cancelled session; the merchant hears the truth once', async () => {
    const checkouts = await Promise.all(
      Array.from({ length: 20 }, (_, index) => openCheckout(server.baseUrl, sk, 40_000 + index * 100)),
    );
    const raced = await Promise.all(
      checkouts.map(async (checkout) => {
        const [transfer, cancel] = await Promise.all([
          call(server.baseUrl, 'POST', '/bank/transfers', {
            json: { accountNumber: checkout.accountNumber, amount: checkout.amount },
          }),
          call(server.baseUrl, 'POST', `/api/widget/sessions/${checkout.sessionId}/cancel`, {
            token: checkout.token,
          }),
        ]);
        return { checkout, transfer, cancel };
      }),
    );

    const outcomes: string[] = [];
    for (const { checkout, transfer, cancel } of raced) {
      expect(transfer.status, transfer.text).toBe(200);
      // A cancel that lost to the payment is told so; one that won answers the cancelled session.
      expect([200, 409]).toContain(cancel.status);
      const session = (
        await call(server.baseUrl, 'GET', `/api/widget/sessions/${checkout.sessionId}`, { token: sk })
      ).body.data;
      const books = await bankBooks(checkout.accountNumber);
      expect(books).toHaveLength(1);
      const credited = books.filter((row) => row.outcome === 'credited');
      if (session.status === 'cancelled') {
        // The bank closed the account before the money came: the payer's transfer went back.
        expect(credited).toEqual([]);
        expect(transfer.body.data).toMatchObject({ outcome: 'returned', returnReason: 'account_closed' });
        expect(cancel.status).toBe(200);
        expect(session.paidAt).toBeNull();
      } else {
        expect(session.status).toBe('successful');
        expect(credited).toEqual([
          { id: transfer.body.data.id, amount: checkout.amount, outcome: 'credited', refunded: 0 },
        ]);
        expect(session.amount).toBe(checkout.amount);
        expect(session.paidAt).not.toBeNull();
        if (cancel.status === 409) expect(cancel.body.meta.code).toBe('session_not_active');
      }
      // Exactly one ending, recorded once, whatever order the bank's notification and the cancel took.
      const ends = await terminalEvents(checkout.sessionId);
      expect(ends.map((event) => event.type)).toEqual([`session.${session.status}`]);
      outcomes.push(session.status);
    }
    expect(outcomes).toHaveLength(20);

    // The merchant's webhooks: one ending event per session, saying what the bank's books say. Delivery is at
    // least once (docs/protocol.md): an attempt whose 2xx came after the fast schedule's 1 s timeout (a busy
    // machine) is sent again, so the receiver counts events by id, as a merchant's must.
    const endingEvents = () =>
      new Set(
        receiver.received
          .filter((entry) => ['session.successful', 'session.cancelled'].includes(entry.body.type))
          .map((entry) => entry.body.id),
      );
    await vi.waitFor(
      () => {
        expect(endingEvents().size).toBe(20);
      },
      // Twenty signed deliveries on the fast schedule; generous, as the machine may be busy.
      { timeout: 45_000 },
    );
    for (const { checkout } of raced) {
      const deliveries = receiver.received.filter(
        (entry) => entry.body.data.session.id === checkout.sessionId,
      );
      const ends = deliveries.filter((entry) => entry.body.type !== 'session.credit_unapplied');
      // One event (a repeated delivery carries the same event, byte for byte).
      expect(new Set(ends.map((entry) => entry.body.id)).size).toBe(1);
      expect(new Set(ends.map((entry) => entry.raw.toString())).size).toBe(1);
      const [end] = ends;
      if (!end) throw new Error('unreachable');
      for (const delivery of ends) {
        expect(
          independentlyVerify(delivery.raw, String(delivery.headers['x-service-signature']), secret),
        ).toBe(true);
      }
      expect(end.body.data.session.amount).toBe(checkout.amount);
      const credited = (await bankBooks(checkout.accountNumber)).some((row) => row.outcome === 'credited');
      expect(end.body.type).toBe(credited ? 'session.successful' : 'session.cancelled');
    }
  }, 90_000);
});
