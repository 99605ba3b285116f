import type { QueryResult } from 'pg';
import type { Repositories } from '../repositories.ts';
import type { WidgetTokenRecord } from '../widget-tokens.ts';
import { exactInteger } from './exact-integer.ts';
import type { Queryable } from './notification-channel.ts';

type WidgetTokenRow = { token_hash: Buffer; session_id: string; created_at: string; expires_at: string };

/** What the service calls: `Repositories['widgetTokens']` (a class cannot implement an indexed type directly). */
type WidgetTokensContract = Repositories['widgetTokens'];

/**
 * The PostgreSQL twin of `WidgetTokenRepository` (`../widget-tokens.ts`): widget tokens, stored only as their
 * SHA-256 (`bytea`). `db` is the pool for a read, or the client of a write transaction.
 *
 * @example
 * const tokens = new PostgresWidgetTokenRepository(pool);
 * const token = await tokens.findByHash(createHash('sha256').update(presented).digest());
 */
export class PostgresWidgetTokenRepository implements WidgetTokensContract {
  constructor(private readonly db: Queryable) {}

  async insert(token: WidgetTokenRecord): Promise<void> {
    await this.db.query(
      'INSERT INTO widget_tokens (token_hash, session_id, created_at, expires_at) VALUES ($1, $2, $3, $4)',
      [token.tokenHash, token.sessionId, token.createdAt, token.expiresAt],
    );
  }

  async findByHash(hash: Buffer): Promise<WidgetTokenRecord | undefined> {
    const result = (await this.db.query('SELECT * FROM widget_tokens WHERE token_hash = $1', [
      hash,
    ])) as QueryResult<WidgetTokenRow>;
    const row = result.rows[0];
    return (
      row && {
        tokenHash: row.token_hash,
        sessionId: row.session_id,
        createdAt: exactInteger(row.created_at),
        expiresAt: exactInteger(row.expires_at),
      }
    );
  }
}
