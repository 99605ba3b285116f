import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, type SqliteDatabase } from './database.ts';
import { readMigrations } from './migrations.ts';
import { SqliteRunner } from './sqlite-runner.ts';
import { SqlWebhookDeliveryRepository } from './webhook-deliveries.ts';

// Migration 011 (issue 8; SQLite's 008 before the one history): excerpts stored before the worker withheld the
// answers of non-public receivers may hold what a loopback service said; no row tells which, so every excerpt
// stored before it is cleared and the attempt says why. Its PostgreSQL side is tested in
// test/postgres/migrate-postgres.test.ts.

const WITHHOLDING_MIGRATION = 11;

let db: SqliteDatabase | undefined;

afterEach(() => {
  db?.close();
  db = undefined;
});

/** A database whose schema stops before migration 011, with one delivery and three attempts as 010 kept them. */
function databaseBeforeWithholding(): SqliteDatabase {
  const opened = new Database(':memory:');
  opened.pragma('foreign_keys = ON');
  migrate(
    opened,
    readMigrations().filter((migration) => migration.version < WITHHOLDING_MIGRATION),
  );
  expect(opened.pragma('user_version', { simple: true })).toBe(WITHHOLDING_MIGRATION - 1);
  opened.exec(`
    INSERT INTO businesses (id, name, created_at) VALUES ('biz_1', 'Shop', 1);
    INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
      payer_email, client_secret_hash, created_at, updated_at, expires_at)
      VALUES ('ses_1', 'biz_1', 'test', 'order-1', 'cancelled', 500000, 'NGN', 'Ada', 'ada@example.com',
      x'01', 1, 2, 3);
    INSERT INTO events (id, business_id, environment, session_id, type, payload, created_at)
      VALUES ('evt_1', 'biz_1', 'test', 'ses_1', 'session.cancelled', '{}', 2);
    INSERT INTO webhook_endpoints (id, business_id, environment, url, events, secret_ciphertext, created_at,
      updated_at) VALUES ('we_1', 'biz_1', 'test', 'http://127.0.0.1:8080/hooks', '[]', 'sealed', 1, 1);
    INSERT INTO webhook_deliveries (id, endpoint_id, event_id, status, attempt_count, created_at, updated_at)
      VALUES ('wd_1', 'we_1', 'evt_1', 'failed', 3, 2, 5);
    -- Before the fix: a loopback receiver's answer, kept.
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
      VALUES ('wd_1', 3, 500, 4, NULL, '{"secret":"what the local service said"}');
    -- After it: the answer withheld, the reason in error.
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
      VALUES ('wd_1', 4, 500, 4, 'withheld:receiver_not_public', NULL);
    -- No answer at all.
    INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
      VALUES ('wd_1', 5, NULL, 1000, 'timed out after 1000 ms', NULL);
  `);
  return opened;
}

describe('migration 011: excerpts stored before answers were withheld', () => {
  it('clears every stored excerpt and marks the attempt receiver_not_checked; other attempts are untouched', async () => {
    db = databaseBeforeWithholding();
    migrate(db);

    expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(WITHHOLDING_MIGRATION);
    expect(
      db.prepare('SELECT count(*) AS n FROM webhook_attempts WHERE response_excerpt IS NOT NULL').get(),
    ).toEqual({ n: 0 });
    const attempts = (await new SqlWebhookDeliveryRepository(new SqliteRunner(db)).attemptsOf(['wd_1'])).get(
      'wd_1',
    );
    expect(attempts).toEqual([
      {
        deliveryId: 'wd_1',
        attemptedAt: 3,
        statusCode: 500,
        latencyMs: 4,
        error: null,
        responseExcerpt: null,
        responseExcerptWithheld: 'receiver_not_checked',
      },
      {
        deliveryId: 'wd_1',
        attemptedAt: 4,
        statusCode: 500,
        latencyMs: 4,
        error: null,
        responseExcerpt: null,
        responseExcerptWithheld: 'receiver_not_public',
      },
      {
        deliveryId: 'wd_1',
        attemptedAt: 5,
        statusCode: null,
        latencyMs: 1000,
        error: 'timed out after 1000 ms',
        responseExcerpt: null,
        responseExcerptWithheld: null,
      },
    ]);
  });

  it('runs once: an excerpt a public receiver answered after it is kept', async () => {
    db = databaseBeforeWithholding();
    migrate(db);
    const deliveries = new SqlWebhookDeliveryRepository(new SqliteRunner(db));
    await deliveries.recordAttempt({
      deliveryId: 'wd_1',
      attemptedAt: 6,
      statusCode: 200,
      latencyMs: 4,
      error: null,
      responseExcerpt: 'thanks',
      responseExcerptWithheld: null,
    });
    migrate(db);
    expect((await deliveries.attemptsOf(['wd_1'])).get('wd_1')?.at(-1)).toMatchObject({
      responseExcerpt: 'thanks',
      responseExcerptWithheld: null,
    });
  });
});
