import { afterEach, describe, expect, it, vi } from 'vitest';
import { fail, mockedApi, ORIGIN } from '../../test-support/fixtures.ts';
import { InvalidRequestError, ServicePayError } from '../errors.ts';

// The request an export sends and how its answer is read, on undici's MockAgent (no connection can be made).
// Against the real reference server, with real cuts and failures: test/contract/exports.test.ts.

const CSV = '\uFEFFid,createdAt\r\ntxn_1,2026-12-01T00:00:00.000Z\r\n';

const read = async (stream: AsyncIterable<Buffer>) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
};

describe('exports (mocked transport)', () => {
  const api = mockedApi();

  afterEach(() => vi.restoreAllMocks());

  it('sends the range with Dates as ISO 8601 and ?environment=, asks for text/csv, and streams the body as sent', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({
        path: '/api/exports/balance-transactions',
        method: 'GET',
        query: { environment: 'test', createdFrom: '2026-12-01T00:00:00.000Z', createdTo: '2026-12-02' },
        headers: { accept: 'text/csv', authorization: `Bearer sk_test_${'a'.repeat(32)}` },
      })
      .reply(200, CSV, {
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition':
            'attachment; filename="servicepay-balance-transactions-test-2026-12-01-to-2026-12-02.csv"',
          'request-id': 'req_export',
        },
      });
    const { data: csv, response } = await api.client.exports
      .balanceTransactions({
        environment: 'test',
        createdFrom: new Date('2026-12-01T00:00:00Z'),
        createdTo: '2026-12-02',
      })
      .withResponse();
    expect(csv.filename).toBe('servicepay-balance-transactions-test-2026-12-01-to-2026-12-02.csv');
    expect(response).toMatchObject({ statusCode: 200, requestId: 'req_export' });
    expect(await read(csv)).toBe(CSV);
  });

  it('gives no file name for one that is not a plain file name (a path, or none)', async () => {
    const pool = api.agent.get(ORIGIN);
    pool
      .intercept({ path: '/api/exports/sessions', method: 'GET' })
      .reply(200, CSV, { headers: { 'content-disposition': 'attachment; filename="../../.bashrc"' } });
    pool.intercept({ path: '/api/exports/sessions', method: 'GET' }).reply(200, CSV);
    const traversing = await api.client.exports.sessions();
    expect(traversing.filename).toBeNull();
    await read(traversing);
    const unnamed = await api.client.exports.sessions();
    expect(unnamed.filename).toBeNull();
    await read(unnamed);
  });

  it('throws an error answer as the typed error of its status, its field errors kept', async () => {
    api.agent
      .get(ORIGIN)
      .intercept({ path: '/api/exports/sessions?createdFrom=yesterday', method: 'GET' })
      .reply(
        400,
        fail(400, 'validation_failed', { errors: [{ path: 'createdFrom', message: 'Invalid date' }] }),
        {
          headers: { 'content-type': 'application/json' },
        },
      );
    const refused = api.client.exports.sessions({ createdFrom: 'yesterday' });
    await expect(refused).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(refused).rejects.toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'createdFrom' }],
    });
  });

  it('in a runtime without node:stream, says so before sending anything (getBuiltinModule stubbed)', async () => {
    vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never);
    const refused = api.client.exports.sessions();
    await expect(refused).rejects.toBeInstanceOf(ServicePayError);
    await expect(refused).rejects.toMatchObject({ code: 'node_streams_unavailable', statusCode: null });
    // Sent, it would have failed otherwise: no interceptor is set and the agent refuses real connections.
  });
});
