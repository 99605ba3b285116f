import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envelopeOf, RefundSchema } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentRefundRequest } from '../../reference-server/src/bank/bank-gateway.ts';
import { randomBase62 } from '../../reference-server/src/internal/random.ts';
import { call, paySession, retrieveSession } from '../support/api.ts';
import { independentlyVerify, startReceiver } from '../support/checkout.ts';
import { postgresAvailable, reportIfPostgresMissing } from '../support/postgres.ts';
import { useScratchDatabase } from '../support/scratch-database.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 26 on several instances: refunds of one session arriving at two instances at once never add up to more
// than was paid (the admission is one conditional write of the session's row, which PostgreSQL serialises),
// and a refund an instance recorded but never saw answered is sent once, by the other instance's sweep.

reportIfPostgresMissing();

const RefundEnvelope = envelopeOf(RefundSchema);

describe.runIf(postgresAvailable)('refunds on two instances of one PostgreSQL', () => {
  const scratch = useScratchDatabase({ database: 'refunds', pools: { admin: { max: 2 } } });
  let a: RunningServer;
  let b: RunningServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let key: string;
  let webhookSecret: string;
  const folder = mkdtempSync(join(tmpdir(), 'servicepay-refund-instances-'));

  beforeAll(async () => {
    const config = {
      databaseUrl: scratch.url,
      bank: { secret: randomBase62(40) },
      rateLimit: { perMinute: 10_000 },
      sweepIntervalMs: 3_600_000,
    };
    [a, b] = await Promise.all([
      startServer(config, { dbPath: join(folder, 'bank-a.db') }),
      startServer(config, { dbPath: join(folder, 'bank-b.db') }),
    ]);
    receiver = await startReceiver();
    key = (await a.createBusiness({ name: 'Two Instance Refunds' })).keys.test.secretKey;
    webhookSecret = (
      await call(b.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url: receiver.url } })
    ).body.data.secret;
  }, 60_000);

  afterAll(async () => {
    await receiver?.close();
    await Promise.all([a?.close(), b?.close()]);
    rmSync(folder, { recursive: true, force: true });
  });

  const rows = async <T>(sql: string, values: unknown[] = []) =>
    (await scratch.admin.query(sql, values)).rows as T[];
  const refund = (server: RunningServer, sessionId: string, json: Record<string, unknown>) =>
    call(server.baseUrl, 'POST', `/api/widget/sessions/${sessionId}/refunds`, { token: key, json });

  it('twenty refunds at once, half through each instance, never add up to more than was paid', async () => {
    const session = await paySession(a.baseUrl, key, { amount: 50_000 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) => refund(index % 2 ? a : b, session.id, { amount: 7_000 })),
    );
    const made = answers
      .filter((answer) => answer.status === 201)
      .map((answer) => RefundEnvelope.parse(answer.body).data);
    expect(made).toHaveLength(7);
    expect(made.every((one) => one.status === 'succeeded')).toBe(true);
    for (const answer of answers.filter((one) => one.status !== 201)) {
      expect(answer.status, answer.text).toBe(400);
      expect(answer.body.meta.code).toBe('refund_exceeds_remaining');
    }
    expect((await retrieveSession(b.baseUrl, key, session.id)).amountRefunded).toBe(49_000);
    const [books] = await rows<{ n: string; total: string }>(
      `SELECT count(*) AS n, sum(p.amount) AS total FROM bank_payer_refunds p JOIN refunds r ON r.id = p.id
       WHERE r.session_id = $1 AND p.outcome = 'credited'`,
      [session.id],
    );
    expect({ n: Number(books?.n), total: Number(books?.total) }).toEqual({ n: 7, total: 49_000 });
    // Each refund's webhook is delivered once, by whichever instance, signed.
    const told = () =>
      receiver.received.filter(
        (hook) => hook.body.data?.session?.id === session.id && hook.body.data?.refund,
      );
    const until = Date.now() + 15_000;
    while (told().length < 7 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      told()
        .map((hook) => hook.body.data.refund.id)
        .sort(),
    ).toEqual(made.map((one) => one.id).sort());
    for (const hook of told()) {
      expect(independentlyVerify(hook.raw, String(hook.headers['x-service-signature']), webhookSecret)).toBe(
        true,
      );
    }
  });

  it("a refund whose instance never saw the bank's answer is sent once, by the other instance's sweep", async () => {
    const session = await paySession(a.baseUrl, key, { amount: 30_000 });
    const bank = a.service.deps.bank;
    const real = bank.refundPayment.bind(bank);
    // Instance a's answers are lost (it is killed as the bank answers): the bank moved the money.
    bank.refundPayment = async (request: PaymentRefundRequest) => {
      await real(request);
      throw new Error('instance killed before the answer was recorded');
    };
    try {
      const answer = await refund(a, session.id, { amount: 30_000 });
      const pending = RefundEnvelope.parse(answer.body).data;
      expect(pending.status).toBe('pending');
      await Promise.all([b.service.sweeper.sweep(), b.service.sweeper.sweep()]);
      const after = await call(b.baseUrl, 'GET', `/api/refunds/${pending.id}`, { token: key });
      expect(RefundEnvelope.parse(after.body).data.status).toBe('succeeded');
      const booked = await rows<{ amount: string }>('SELECT amount FROM bank_payer_refunds WHERE id = $1', [
        pending.id,
      ]);
      expect(booked.map((row) => Number(row.amount))).toEqual([30_000]);
      const [events] = await rows<{ n: string }>(
        "SELECT count(*) AS n FROM events WHERE session_id = $1 AND type = 'refund.succeeded'",
        [session.id],
      );
      expect(Number(events?.n)).toBe(1);
    } finally {
      bank.refundPayment = real;
    }
  });
});
