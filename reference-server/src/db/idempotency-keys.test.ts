import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from './database.ts';
import { PENDING_STATUS, SqlIdempotencyKeyRepository } from './idempotency-keys.ts';
import { SqliteRunner } from './sqlite-runner.ts';

// `claim` is how session create remembers its answer inside the write job that makes the session: it must take
// a free or expired key and refuse a live one, so the caller can roll the session back with it.

let db: SqliteDatabase;
let keys: SqlIdempotencyKeyRepository;
const TTL = 24 * 3_600_000;
const answer = (statusCode: number, body: string) => ({
  requestHash: Buffer.from('hash'),
  statusCode,
  responseBody: body,
});

beforeEach(() => {
  db = openDatabase(':memory:');
  keys = new SqlIdempotencyKeyRepository(new SqliteRunner(db));
});

afterEach(() => {
  db.close();
});

describe('IdempotencyKeyRepository.claim (SQLite)', () => {
  it('takes a free key: the answer is found afterwards', async () => {
    expect(
      await keys.claim({ scope: 'biz:test', key: 'k1', createdAt: 1_000 }, answer(201, 'first'), 1_000 - TTL),
    ).toBe(true);
    expect(await keys.find('biz:test', 'k1', 1_000 - TTL)).toMatchObject({
      statusCode: 201,
      responseBody: 'first',
    });
  });

  it('refuses a key a live row holds (a pending mark or an answer), and changes nothing', async () => {
    await keys.remember({ scope: 'biz:test', key: 'k2', createdAt: 5_000 }, answer(PENDING_STATUS, ''));
    expect(
      await keys.claim(
        { scope: 'biz:test', key: 'k2', createdAt: 6_000 },
        answer(201, 'second'),
        6_000 - TTL,
      ),
    ).toBe(false);
    expect(await keys.find('biz:test', 'k2', 0)).toMatchObject({
      statusCode: PENDING_STATUS,
      responseBody: '',
    });
  });

  it('replaces a row older than the TTL, and keeps scopes apart', async () => {
    await keys.remember({ scope: 'biz:test', key: 'k3', createdAt: 0 }, answer(201, 'old'));
    const now = TTL + 1;
    expect(
      await keys.claim({ scope: 'biz:test', key: 'k3', createdAt: now }, answer(201, 'new'), now - TTL),
    ).toBe(true);
    expect(await keys.find('biz:test', 'k3', now - TTL)).toMatchObject({ responseBody: 'new' });
    expect(
      await keys.claim({ scope: 'biz:live', key: 'k3', createdAt: now }, answer(201, 'live'), now - TTL),
    ).toBe(true);
  });
});
