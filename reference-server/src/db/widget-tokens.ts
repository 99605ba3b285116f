import type { SqliteDatabase } from './database.ts';

export interface WidgetTokenRecord {
  tokenHash: Buffer;
  sessionId: string;
  createdAt: number;
  expiresAt: number;
}

type WidgetTokenRow = { token_hash: Buffer; session_id: string; created_at: number; expires_at: number };

export class WidgetTokenRepository {
  private readonly insertStatement;
  private readonly findStatement;

  constructor(db: SqliteDatabase) {
    this.insertStatement = db.prepare(
      `INSERT INTO widget_tokens (token_hash, session_id, created_at, expires_at)
       VALUES (@tokenHash, @sessionId, @createdAt, @expiresAt)`,
    );
    this.findStatement = db.prepare<[Buffer], WidgetTokenRow>(
      'SELECT * FROM widget_tokens WHERE token_hash = ?',
    );
  }

  insert(token: WidgetTokenRecord): void {
    this.insertStatement.run(token);
  }

  findByHash(hash: Buffer): WidgetTokenRecord | undefined {
    const row = this.findStatement.get(hash);
    return (
      row && {
        tokenHash: row.token_hash,
        sessionId: row.session_id,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
      }
    );
  }
}
