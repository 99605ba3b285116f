import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bankNotification, call, createSession, postNotification } from '../support/api.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 13: "provisioning an account at the bank happens outside the database transaction, as it would
// against a real bank's API". On both stores (the postgres project runs this file again on PostgreSQL).

let server: RunningServer;
let key: string;

beforeAll(async () => {
  // No sweeper tick during the tests: its write job, run by the clock, would be counted as one the bank was asked
  // inside (seen once on a loaded machine); these tests are about the jobs their own requests run.
  server = await startServer({ rateLimit: { perMinute: 10_000 }, sweepIntervalMs: 3_600_000 });
  key = (await server.createBusiness({ name: 'Provisioning Shop' })).keys.test.secretKey;
});

afterAll(async () => {
  await server.close();
});

type BankAccountRow = { account_number: string; amount: number; closed: number };

/** The bank's own books: every account it issued for this amount, and whether it is closed. */
const bankAccounts = (amount: number) =>
  server.bankRows<BankAccountRow>(
    `SELECT account_number, amount, CASE WHEN closed_at IS NULL THEN 0 ELSE 1 END AS closed
     FROM bank_accounts WHERE amount = ? ORDER BY created_at, account_number`,
    amount,
  );

/**
 * Tells whether the code running now runs inside one of the service's write jobs (the work handed to
 * `writes.run`), for checking that the bank is never asked from inside one. It follows the job's own async
 * context, not a count of jobs under way: a background job of the service (a sweep, a webhook's record) running
 * at the same moment is not the bank call's job, and on a loaded machine one did (a clean-clone CI run).
 * Undone by `vi.restoreAllMocks()`.
 */
function insideWriteJobProbe(): () => boolean {
  const { store } = server.service.deps;
  const insideJob = new AsyncLocalStorage<true>();
  const run = store.writes.run.bind(store.writes);
  vi.spyOn(store.writes, 'run').mockImplementation((work) =>
    run((...args: Parameters<typeof work>) => insideJob.run(true, () => work(...args))),
  );
  return () => insideJob.getStore() === true;
}

const exchange = (clientSecret: string) =>
  call(server.baseUrl, 'POST', '/api/widget/bootstrap', { json: { clientSecret } });

describe('accounts are provisioned at the bank before the write job, never inside it', () => {
  it('the bank is asked while no write job runs, and the account it gave is the one the checkout shows', async () => {
    const { bank } = server.service.deps;
    const insideWriteJob = insideWriteJobProbe();
    const asked: Array<{ insideWriteJob: boolean; amount: number }> = [];
    const provision = bank.provisionAccount.bind(bank);
    vi.spyOn(bank, 'provisionAccount').mockImplementation((request) => {
      asked.push({ insideWriteJob: insideWriteJob(), amount: request.amount });
      return provision(request);
    });
    try {
      const created = await createSession(server.baseUrl, key, { amount: 61_100 });
      const opened = await exchange(created.clientSecret);
      expect(opened.status).toBe(200);
      expect(asked).toEqual([{ insideWriteJob: false, amount: 61_100 }]);
      expect(await bankAccounts(61_100)).toEqual([
        { account_number: opened.body.data.virtualAccount.accountNumber, amount: 61_100, closed: 0 },
      ]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a client secret that will be refused gets no account at the bank', async () => {
    const created = await createSession(server.baseUrl, key, { amount: 62_200 });
    expect((await exchange(created.clientSecret)).status).toBe(200);
    const again = await exchange(created.clientSecret);
    expect(again.status).toBe(409);
    expect(again.body.meta.code).toBe('client_secret_already_used');
    expect(await bankAccounts(62_200)).toHaveLength(1);
  });

  it('two exchanges of one secret at once: one checkout opens, and the account the loser was given is closed at the bank', async () => {
    const created = await createSession(server.baseUrl, key, { amount: 63_300 });
    const answers = await Promise.all([exchange(created.clientSecret), exchange(created.clientSecret)]);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409]);
    const winner = answers.find((answer) => answer.status === 200);
    const accounts = await bankAccounts(63_300);
    // Both may have asked the bank (each read the secret unused before either job ran); whatever the loser got
    // is closed, so the only account taking money is the one the payer sees.
    const open = accounts.filter((account) => account.closed === 0);
    expect(open.map((account) => account.account_number)).toEqual([
      winner?.body.data.virtualAccount.accountNumber,
    ]);
    expect(accounts.length).toBeGreaterThanOrEqual(1);
    expect(accounts.length).toBeLessThanOrEqual(2);
  });
});

describe('closing an account and refunding are asked of the bank outside any write job too', () => {
  it('a cancel closes at the bank before its job; a credit nobody can take is refunded after its job', async () => {
    const { bank } = server.service.deps;
    const insideWriteJob = insideWriteJobProbe();
    const asked: Array<{ call: string; insideWriteJob: boolean }> = [];
    const close = bank.closeAccount.bind(bank);
    vi.spyOn(bank, 'closeAccount').mockImplementation((accountNumber) => {
      asked.push({ call: `close ${accountNumber}`, insideWriteJob: insideWriteJob() });
      return close(accountNumber);
    });
    const refund = bank.refund.bind(bank);
    vi.spyOn(bank, 'refund').mockImplementation((transferId, reason) => {
      asked.push({ call: `refund ${transferId}`, insideWriteJob: insideWriteJob() });
      return refund(transferId, reason);
    });
    try {
      const created = await createSession(server.baseUrl, key, { amount: 64_400 });
      const opened = await exchange(created.clientSecret);
      const { accountNumber } = opened.body.data.virtualAccount;
      const cancelled = await call(server.baseUrl, 'POST', `/api/widget/sessions/${created.id}/cancel`, {
        token: key,
      });
      expect(cancelled.status, cancelled.text).toBe(200);
      expect(cancelled.body.data.status).toBe('cancelled');
      // A notification of a credit to an account the service never issued: recorded, and the bank asked to
      // send it back (it refuses: it made no such credit).
      const stray = bankNotification('9999999999', 500);
      expect((await postNotification(server, stray)).body.data.result).toBe('unknown_account');
      expect(asked).toEqual([
        { call: `close ${accountNumber}`, insideWriteJob: false },
        { call: `refund ${stray.transfer.id}`, insideWriteJob: false },
      ]);
      expect(await bankAccounts(64_400)).toEqual([
        { account_number: accountNumber, amount: 64_400, closed: 1 },
      ]);
      const [credit] = await server.rows<{ refund_status: string }>(
        'SELECT refund_status FROM unapplied_credits WHERE transfer_id = ?',
        stray.transfer.id,
      );
      expect(credit).toEqual({ refund_status: 'refund_refused' });
    } finally {
      vi.restoreAllMocks();
    }
  });
});
