/**
 * Seeds a database file with sessions for the table-size benchmarks, fast: one SQL statement in one
 * transaction, no service running. The shape is a real service's after a while: five businesses, both
 * environments (one session in four live), unique references, one session a second, and statuses as they age:
 * only the newest sessions are still open (pending, awaiting payment, a rare mismatch), older ones are
 * successful, expired or cancelled. Open sessions expire in the future, so the expiry sweeper has nothing to
 * do when the server starts on the file. Each client secret is stored as the service stores one made at the
 * session's creation (`sessions/client-secret.ts`): the time digits, then 32 bytes that stand for its hash.
 */
import { randomBytes } from 'node:crypto';
import { openDatabase } from '../../reference-server/src/db/database.ts';
import { createSqliteStore } from '../../reference-server/src/db/store.ts';
import { createBusiness } from '../../reference-server/src/index.ts';
import { timeOrderedPrefix } from '../../reference-server/src/internal/random.ts';

const BUSINESSES = 5;
/** The newest sessions that may still be open. */
const OPEN_WINDOW = 3_000;

export interface SeededFile {
  dbPath: string;
  /** The test secret key of business 0, whose test sessions the benchmark lists. */
  secretKey: string;
  businessId: string;
  sessions: number;
}

/**
 * The status of seeded session `i` of `total`, drawn from `r`, a scramble of `i` (so the status does not follow
 * the business, which is `i % 5`): open ones among the newest, the rest as they end, a mismatch now and then.
 */
const STATUS_SQL = `CASE
  WHEN i > @total - ${OPEN_WINDOW} THEN CASE r % 10 WHEN 0 THEN 'awaiting_payment' WHEN 1 THEN 'awaiting_payment'
    WHEN 2 THEN 'mismatch' ELSE 'pending' END
  WHEN r % 1000 < 3 THEN 'mismatch'
  WHEN r % 100 < 60 THEN 'successful'
  WHEN r % 100 < 90 THEN 'expired'
  ELSE 'cancelled' END`;

/**
 * Creates `dbPath` (a new file) with the businesses and `total` sessions; returns the key to call with.
 *
 * @example
 * const { dbPath, secretKey } = await seedSessions('/tmp/bench/sessions-1M.db', 1_000_000);
 */
export async function seedSessions(dbPath: string, total: number, now = Date.now()): Promise<SeededFile> {
  const db = openDatabase(dbPath);
  try {
    db.exec('CREATE TABLE bench_businesses (k INTEGER PRIMARY KEY, id TEXT NOT NULL, key TEXT NOT NULL)');
    const store = createSqliteStore(db, () => undefined);
    db.function('seeded_client_secret_key', (createdAt) =>
      Buffer.concat([Buffer.from(timeOrderedPrefix(Number(createdAt)), 'latin1'), randomBytes(32)]),
    );
    for (let k = 0; k < BUSINESSES; k++) {
      const created = await createBusiness(store, `Seeded Shop ${k}`, true, now);
      db.prepare('INSERT INTO bench_businesses (k, id, key) VALUES (?, ?, ?)').run(
        k,
        created.business.id,
        created.keys.test.secretKey,
      );
    }
    db.transaction(() => {
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @total),
           m(i, r) AS (SELECT i, (i * 48271) % 2147483647 FROM n)
         INSERT INTO sessions (id, business_id, environment, reference, status, amount, currency, payer_name,
           payer_email, metadata, client_secret_hash, created_at, updated_at, expires_at)
         SELECT printf('ses_seed%020d', i),
           (SELECT id FROM bench_businesses WHERE k = i % ${BUSINESSES}),
           CASE WHEN (i / ${BUSINESSES}) % 4 = 3 THEN 'live' ELSE 'test' END,
           printf('order-%d', i),
           ${STATUS_SQL},
           1000 + (i % 997) * 100, 'NGN', 'Payer ' || (i % 5000), 'payer' || (i % 5000) || '@example.com',
           '{"cart":"' || i || '"}', seeded_client_secret_key(@now - (@total - i) * 1000),
           @now - (@total - i) * 1000, @now - (@total - i) * 1000,
           CASE WHEN i > @total - ${OPEN_WINDOW} THEN @now + 7200000 ELSE @now - (@total - i) * 1000 + 7200000 END
         FROM m`,
      ).run({ total, now });
    })();
    const first = db.prepare('SELECT id, key FROM bench_businesses WHERE k = 0').get() as {
      id: string;
      key: string;
    };
    const sessions = db.prepare('SELECT COUNT(*) FROM sessions').pluck().get() as number;
    return { dbPath, secretKey: first.key, businessId: first.id, sessions };
  } finally {
    db.close();
  }
}
