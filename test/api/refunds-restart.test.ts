import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envelopeOf, RefundSchema } from '@servicepay/node/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { PaymentRefundRequest } from '../../reference-server/src/bank/bank-gateway.ts';
import { call, paySession, retrieveSession } from '../support/api.ts';
import { startReceiver } from '../support/checkout.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// A refund is never lost and never sent twice: recorded `pending` before the bank is asked, asked again by the
// sweeper of the next run, and booked by the bank once per refund id, however often it is asked.

const RefundEnvelope = envelopeOf(RefundSchema);
const folders: string[] = [];
const servers: RunningServer[] = [];
const receivers: Array<Awaited<ReturnType<typeof startReceiver>>> = [];

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const receiver of receivers.splice(0)) await receiver.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function start(dbPath: string): Promise<RunningServer> {
  // No timed sweep: the test runs the one it means.
  const server = await startServer({ sweepIntervalMs: 3_600_000 }, { dbPath });
  servers.push(server);
  return server;
}

async function stop(server: RunningServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

/**
 * The service's bank, whose refund answers do not reach the service (the instance dies, the network drops):
 * `booked` lets the bank move the money first, as when the answer was lost on its way back.
 */
function answersLost(server: RunningServer, booked: boolean): void {
  const bank = server.service.deps.bank;
  const real = bank.refundPayment.bind(bank);
  bank.refundPayment = async (request: PaymentRefundRequest) => {
    if (booked) await real(request);
    throw new Error('the bank did not answer');
  };
}

describe.each([
  ['before the bank moved the money', false],
  ['after the bank moved the money, its answer lost', true],
])('a refund cut off %s', (_when, booked) => {
  it('is sent once by the next run, recorded succeeded, told once', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'servicepay-refund-restart-'));
    folders.push(folder);
    const dbPath = join(folder, 'servicepay.db');
    const receiver = await startReceiver();
    receivers.push(receiver);
    const first = await start(dbPath);
    const key = (await first.createBusiness({ name: 'Restart Shop' })).keys.test.secretKey;
    await call(first.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url: receiver.url } });
    const session = await paySession(first.baseUrl, key, { amount: 90_000 });
    answersLost(first, booked);
    const answer = await call(first.baseUrl, 'POST', `/api/widget/sessions/${session.id}/refunds`, {
      token: key,
      json: { amount: 40_000 },
    });
    expect(answer.status, answer.text).toBe(201);
    const pending = RefundEnvelope.parse(answer.body).data;
    expect(pending.status).toBe('pending');
    // Held meanwhile: a refund racing this one can take only what is left.
    expect((await retrieveSession(first.baseUrl, key, session.id)).amountRefunded).toBe(40_000);
    await stop(first);

    const second = await start(dbPath);
    await second.service.sweeper.sweep();
    const after = await call(second.baseUrl, 'GET', `/api/refunds/${pending.id}`, { token: key });
    expect(RefundEnvelope.parse(after.body).data.status).toBe('succeeded');
    const books = await second.bankRows<{ amount: number; outcome: string }>(
      'SELECT amount, outcome FROM bank_payer_refunds WHERE id = ?',
      pending.id,
    );
    expect(books).toEqual([{ amount: 40_000, outcome: 'credited' }]);
    // A sweep more (another instance's, a later one) asks nothing: the refund is no longer pending.
    await second.service.sweeper.sweep();
    const [events] = await second.rows<{ n: number }>(
      "SELECT count(*) AS n FROM events WHERE session_id = ? AND type = 'refund.succeeded'",
      session.id,
    );
    expect(Number(events?.n)).toBe(1);
    const until = Date.now() + 10_000;
    const told = () => receiver.received.filter((hook) => hook.body.data?.refund?.id === pending.id);
    while (told().length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(told()).toHaveLength(1);
    expect((await retrieveSession(second.baseUrl, key, session.id)).amountRefunded).toBe(40_000);
  });
});
