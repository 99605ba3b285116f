import type { Environment, SessionStatus } from '@servicepay/node/protocol';
import {
  type IdempotencyClaim,
  IdempotencyKeyTakenError,
  SqlIdempotencyKeyRepository,
} from './idempotency-keys.ts';
import { type Params, type Sql, type SqlRunner, sql } from './sql.ts';
import { SqliteRunner } from './sqlite-runner.ts';
import { column, type RecordOf, table } from './table.ts';

/** `sessions`: a payment session. Times in epoch milliseconds. */
export const sessions = table('sessions', {
  seq: column.serial(),
  id: column.text(),
  businessId: column.text(),
  environment: column.text<Environment>(),
  reference: column.text(),
  status: column.text<SessionStatus>(),
  amount: column.int(),
  currency: column.text(),
  payerName: column.text(),
  payerEmail: column.text(),
  payerPhone: column.nullable(column.text()),
  metadata: column.json<Record<string, string>>(),
  /** The client secret's lookup key: its SHA-256, after 8 digits of its creation time (`client-secret.ts`). */
  clientSecretHash: column.bytes(),
  clientSecretUsedAt: column.nullable(column.int()),
  /** The account currently offered to the payer, if any. */
  accountNumber: column.nullable(column.text()),
  /** Amount of the last transfer of the wrong amount, shown on MISMATCH. */
  mismatchReceived: column.nullable(column.int()),
  createdAt: column.int(),
  updatedAt: column.int(),
  expiresAt: column.int(),
  paidAt: column.nullable(column.int()),
  /** What the session's refunds hold, pending and succeeded, in minor units: never more than `amount`. */
  amountRefunded: column.int(),
  /** The payment link the session was made through (`pl_…`), if any. */
  paymentLinkId: column.nullable(column.text()),
  /** Where the hosted checkout sends the payer after SUCCESS / after a cancel or expiry (`{SESSION_ID}` filled in). */
  successUrl: column.nullable(column.text()),
  cancelUrl: column.nullable(column.text()),
});

export type SessionRecord = RecordOf<typeof sessions.columns>;

export type NewSession = Omit<
  SessionRecord,
  | 'seq'
  | 'clientSecretUsedAt'
  | 'accountNumber'
  | 'mismatchReceived'
  | 'paidAt'
  | 'amountRefunded'
  | 'paymentLinkId'
  | 'successUrl'
  | 'cancelUrl'
> &
  Partial<Pick<SessionRecord, 'paymentLinkId' | 'successUrl' | 'cancelUrl'>>;

/**
 * A new session as it is stored: every column but the database's `seq`, those a new session starts without
 * filled in. What a create answers is made from it before the insert (the answer is remembered with it).
 *
 * @example
 * const view = toSessionView(storedSession(newSession), undefined);
 */
export function storedSession(session: NewSession): Omit<SessionRecord, 'seq'> {
  return {
    paymentLinkId: null,
    successUrl: null,
    cancelUrl: null,
    ...session,
    clientSecretUsedAt: null,
    accountNumber: null,
    mismatchReceived: null,
    paidAt: null,
    amountRefunded: 0,
  };
}

export interface SessionListQuery {
  businessId: string;
  environment: Environment;
  status?: SessionStatus | undefined;
  reference?: string | undefined;
  /** Only the sessions made through this payment link. */
  paymentLinkId?: string | undefined;
  /** Only sessions older than this one (cursor). */
  beforeSeq?: number | undefined;
  limit: number;
}

/**
 * The session as the caller read it: a change applies only while its status and its account are still these,
 * so two writers that read the same session cannot both apply a change (on PostgreSQL two instances, or two
 * jobs of one; the second finds the row changed and runs again).
 */
export interface SessionExpectation {
  status: SessionStatus;
  accountNumber: string | null;
}

/** The fields a status transition may change, all at once. */
export interface SessionChange {
  status: SessionStatus;
  updatedAt: number;
  accountNumber: string | null;
  mismatchReceived: number | null;
  paidAt: number | null;
}

/** Payment sessions as the service reads and writes them. */
export interface SessionRepository {
  /**
   * Inserts a new session and returns it as stored, or undefined, writing nothing, when its business already
   * has a session with this reference in this environment: the unique index decides, in the same statement (on
   * PostgreSQL a reference another instance is inserting right now is waited for, then counted as used).
   */
  insert(session: NewSession): Promise<SessionRecord | undefined>;
  /**
   * `insert`, and with the session, in the same write, the `Idempotency-Key` answer that reports it (`claim`,
   * as `IdempotencyKeyRepository.claim` takes it). Undefined, writing nothing, when the reference is used;
   * throws `IdempotencyKeyTakenError`, writing nothing, when a live row holds the key. On PostgreSQL this is
   * one statement, so a create is one round trip (issue 38).
   */
  insertAnswered(session: NewSession, claim: IdempotencyClaim): Promise<SessionRecord | undefined>;
  find(id: string): Promise<SessionRecord | undefined>;
  findByClientSecretHash(hash: Buffer): Promise<SessionRecord | undefined>;
  /** Marks the client secret exchanged; false when it already was (by this instance or another). */
  markClientSecretUsed(id: string, at: number): Promise<boolean>;
  /**
   * Applies a change only if the session is still as `expected` (status and account), and returns the session
   * as changed; undefined, changing nothing, when it was not as expected (or does not exist). One statement
   * (`UPDATE … RETURNING`): of N concurrent transitions from one state exactly one applies, and the one that did
   * needs no second read of the row (issue 38: a round trip fewer per transition on PostgreSQL).
   */
  change(id: string, expected: SessionExpectation, change: SessionChange): Promise<SessionRecord | undefined>;
  /**
   * Brings an open session's end forward to `at` (test mode's "expire now"); false when the session has ended
   * or already ends by then. The sweeper's own code then ends it as at its natural end.
   */
  expireAt(id: string, at: number): Promise<boolean>;
  /** Open sessions whose countdown has run out, oldest deadline first, ties in creation order. */
  overdue(now: number, limit: number): Promise<SessionRecord[]>;
  /** One page of an owner's sessions, newest first, through the index that answers the filter. */
  list(query: SessionListQuery): Promise<SessionRecord[]>;
  /**
   * Counts `amount` as refunded on a successful session, only if what its refunds hold stays within what was
   * paid: one conditional `UPDATE`, so of any number of concurrent refunds (any instance) only those that fit
   * apply, each seeing the others' commits (a row lock on PostgreSQL, the one writer on SQLite). False when
   * the session is not successful or the amount does not fit, or, with `expectedRefunded`, when what its
   * refunds hold is no longer that (the portal's confirm step applies only to the session as reviewed).
   */
  reserveRefund(id: string, amount: number, now: number, expectedRefunded?: number): Promise<boolean>;
  /** Gives a failed refund's `amount` back: refundable again. */
  releaseRefund(id: string, amount: number, now: number): Promise<boolean>;
}

const SELECT = `SELECT ${sessions.select()} FROM sessions`;
const PAGE = 'seq < @beforeSeq ORDER BY seq DESC LIMIT @limit';
const OWNER = 'business_id = @businessId AND environment = @environment';

/**
 * The list's statements, one per filter, each reading only the rows it answers through its own index (not one
 * with `(@status IS NULL OR status = @status)`, which a planner plans once, for the owner index: 272 ms at 1M
 * sessions for a rare status on SQLite, issue 12). Per dialect where the planners differ:
 *
 * - SQLite plans each once, from the equalities: the owner index, `sessions_by_owner_status` (migration 006),
 *   the unique reference index; `+status` keeps it from weighing the status index for the reference's one row.
 *   `db/sessions.test.ts` holds each to its index (EXPLAIN QUERY PLAN).
 * - PostgreSQL, with equalities on every column before `seq`, treats them as constants and may walk the primary
 *   key backwards past other owners' rows when the owner holds a large share of the table (100,000 rows read for
 *   a page of 21 when tried). So the column just before `seq` in each index is pinned by a range
 *   (`environment >= @environment AND environment <= @environment`) and kept in the `ORDER BY`, which only that
 *   index supplies without a sort; for text in a deterministic collation the range holds exactly when `=` does.
 *   `test/postgres/session-list-plans.test.ts` EXPLAINs the very statements.
 */
export const sessionList = {
  owner: sql<SessionRecord>({
    sqlite: `${SELECT} WHERE ${OWNER} AND ${PAGE}`,
    postgres: `${SELECT} WHERE business_id = @businessId AND environment >= @environment AND environment <= @environment
               AND seq < @beforeSeq ORDER BY environment, seq DESC LIMIT @limit`,
  }),
  byStatus: sql<SessionRecord>({
    sqlite: `${SELECT} WHERE ${OWNER} AND status = @status AND ${PAGE}`,
    // `sessions_by_owner_status` is (business_id, environment, status, seq) ascending: read backwards.
    postgres: `${SELECT} WHERE ${OWNER} AND status >= @status AND status <= @status
               AND seq < @beforeSeq ORDER BY status DESC, seq DESC LIMIT @limit`,
  }),
  // At most one row by the unique index: plain equalities, on both.
  byReference: sql<SessionRecord>(`${SELECT} WHERE ${OWNER} AND reference = @reference AND ${PAGE}`),
  // A link's sessions through `sessions_by_payment_link` (migration 016); the other filters apply to its rows.
  byPaymentLink: sql<SessionRecord>(
    `${SELECT} WHERE payment_link_id = @paymentLinkId AND ${OWNER}
       AND (CAST(@status AS text) IS NULL OR status = @status)
       AND (CAST(@reference AS text) IS NULL OR reference = @reference) AND ${PAGE}`,
  ),
  byReferenceAndStatus: sql<SessionRecord>({
    sqlite: `${SELECT} WHERE ${OWNER} AND reference = @reference AND +status = @status AND ${PAGE}`,
    postgres: `${SELECT} WHERE ${OWNER} AND reference = @reference AND status = @status AND ${PAGE}`,
  }),
};

/**
 * The statement `list` runs for `query`, and its parameters.
 *
 * @example
 * const { statement, params } = sessionListStatement({ businessId, environment: 'test', status: 'pending', limit: 21 });
 */
export function sessionListStatement(query: SessionListQuery): {
  statement: Sql<SessionRecord>;
  params: Params;
} {
  const params: Record<string, unknown> = {
    businessId: query.businessId,
    environment: query.environment,
    beforeSeq: query.beforeSeq ?? Number.MAX_SAFE_INTEGER,
    limit: query.limit,
  };
  if (query.paymentLinkId !== undefined) {
    const filters = { status: query.status ?? null, reference: query.reference ?? null };
    return {
      statement: sessionList.byPaymentLink,
      params: { ...params, ...filters, paymentLinkId: query.paymentLinkId },
    };
  }
  if (query.status !== undefined) params.status = query.status;
  if (query.reference !== undefined) params.reference = query.reference;
  const statement =
    query.reference !== undefined
      ? query.status !== undefined
        ? sessionList.byReferenceAndStatus
        : sessionList.byReference
      : query.status !== undefined
        ? sessionList.byStatus
        : sessionList.owner;
  return { statement, params };
}

const statements = {
  insert: sql<{ seq: number }>(
    sessions.insert('ON CONFLICT (business_id, environment, reference) DO NOTHING RETURNING seq'),
  ),
  find: sql<SessionRecord>(`${SELECT} WHERE id = @id`),
  findByClientSecret: sql<SessionRecord>(`${SELECT} WHERE client_secret_hash = @hash`),
  markClientSecretUsed: sql(
    'UPDATE sessions SET client_secret_used_at = @at WHERE id = @id AND client_secret_used_at IS NULL',
  ),
  // Guarded by the session as read: a transition that lost a race changes nothing.
  change: sql<SessionRecord>(
    `UPDATE sessions SET status = @status, updated_at = @updatedAt, account_number = @accountNumber,
       mismatch_received = @mismatchReceived, paid_at = @paidAt
     WHERE id = @id AND status = @expectedStatus AND account_number IS NOT DISTINCT FROM @expectedAccountNumber
     RETURNING ${sessions.select()}`,
  ),
  expireAt: sql(
    `UPDATE sessions SET expires_at = @at
     WHERE id = @id AND status IN ('pending', 'awaiting_payment', 'mismatch') AND expires_at > @at`,
  ),
  // Ties by seq: the order SQLite's `sessions_open_by_expiry` index gives them (its entries end with the rowid).
  reserveRefund: sql(
    `UPDATE sessions SET amount_refunded = amount_refunded + @amount, updated_at = @now
     WHERE id = @id AND status = 'successful' AND amount_refunded + @amount <= amount
       AND (CAST(@expectedRefunded AS bigint) IS NULL OR amount_refunded = @expectedRefunded)`,
  ),
  releaseRefund: sql(
    `UPDATE sessions SET amount_refunded = amount_refunded - @amount, updated_at = @now
     WHERE id = @id AND amount_refunded >= @amount`,
  ),
  overdue: sql<SessionRecord>(
    `${SELECT} WHERE status IN ('pending', 'awaiting_payment', 'mismatch') AND expires_at <= @now
     ORDER BY expires_at, seq LIMIT @limit`,
  ),
};

/**
 * `SessionRepository` on either store.
 *
 * @example
 * const paid = await new SqlSessionRepository(tx).change('ses_1', { status: 'awaiting_payment', accountNumber },
 *   { status: 'successful', updatedAt: now, accountNumber, mismatchReceived: null, paidAt: now }); // or undefined
 */
export class SqlSessionRepository implements SessionRepository {
  constructor(protected readonly db: SqlRunner) {}

  async insert(session: NewSession): Promise<SessionRecord | undefined> {
    const record = storedSession(session);
    const inserted = await this.db.get(statements.insert, sessions.encode(record));
    return inserted && { ...record, seq: inserted.seq };
  }

  /** Two statements here, in the caller's write job; `PostgresSessionRepository` makes them one. */
  async insertAnswered(session: NewSession, claim: IdempotencyClaim): Promise<SessionRecord | undefined> {
    const inserted = await this.insert(session);
    if (!inserted) return undefined;
    const keys = new SqlIdempotencyKeyRepository(this.db);
    if (!(await keys.claim(claim.entry, claim.response, claim.notBefore)))
      throw new IdempotencyKeyTakenError();
    return inserted;
  }

  async find(id: string): Promise<SessionRecord | undefined> {
    return sessions.decode(await this.db.get(statements.find, { id }));
  }

  async findByClientSecretHash(hash: Buffer): Promise<SessionRecord | undefined> {
    return sessions.decode(await this.db.get(statements.findByClientSecret, { hash }));
  }

  async markClientSecretUsed(id: string, at: number): Promise<boolean> {
    return (await this.db.run(statements.markClientSecretUsed, { id, at })) === 1;
  }

  async change(
    id: string,
    expected: SessionExpectation,
    change: SessionChange,
  ): Promise<SessionRecord | undefined> {
    const params = {
      id,
      expectedStatus: expected.status,
      expectedAccountNumber: expected.accountNumber,
      ...change,
    };
    return sessions.decode(await this.db.get(statements.change, params));
  }

  async expireAt(id: string, at: number): Promise<boolean> {
    return (await this.db.run(statements.expireAt, { id, at })) === 1;
  }

  async reserveRefund(id: string, amount: number, now: number, expectedRefunded?: number): Promise<boolean> {
    const params = { id, amount, now, expectedRefunded: expectedRefunded ?? null };
    return (await this.db.run(statements.reserveRefund, params)) === 1;
  }

  async releaseRefund(id: string, amount: number, now: number): Promise<boolean> {
    return (await this.db.run(statements.releaseRefund, { id, amount, now })) === 1;
  }

  async overdue(now: number, limit: number): Promise<SessionRecord[]> {
    return (await this.db.all(statements.overdue, { now, limit })).map((row) => sessions.decode(row));
  }

  async list(query: SessionListQuery): Promise<SessionRecord[]> {
    const { statement, params } = sessionListStatement(query);
    return (await this.db.all(statement, params)).map((row) => sessions.decode(row));
  }

  /**
   * How SQLite runs `list(query)`: the `detail` lines of `EXPLAIN QUERY PLAN` for the very statement and
   * parameters `list` uses (SQLite only; PostgreSQL's are EXPLAINed by its own test).
   *
   * @example
   * repository.explainList({ businessId, environment: 'test', status: 'pending', limit: 21 });
   * // ['SEARCH sessions USING INDEX sessions_by_owner_status (business_id=? AND environment=? AND status=? AND seq<?)']
   */
  explainList(query: SessionListQuery): string[] {
    if (!(this.db instanceof SqliteRunner)) throw new Error('explainList reads SQLite plans only');
    const { statement, params } = sessionListStatement(query);
    return this.db.db
      .prepare<Params, { detail: string }>(`EXPLAIN QUERY PLAN ${statement.sqlite}`)
      .all(params)
      .map((row) => row.detail);
  }
}
