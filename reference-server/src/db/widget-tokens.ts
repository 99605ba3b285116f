import { type SqlRunner, sql } from './sql.ts';
import { column, type RecordOf, table } from './table.ts';

/** `widget_tokens`: the checkout's tokens, stored only as their SHA-256. */
export const widgetTokens = table('widget_tokens', {
  tokenHash: column.bytes(),
  sessionId: column.text(),
  createdAt: column.int(),
  expiresAt: column.int(),
});

export type WidgetTokenRecord = RecordOf<typeof widgetTokens.columns>;

/** Widget tokens as the service reads and writes them. */
export interface WidgetTokenRepository {
  insert(token: WidgetTokenRecord): Promise<void>;
  findByHash(hash: Buffer): Promise<WidgetTokenRecord | undefined>;
}

const statements = {
  insert: sql(widgetTokens.insert()),
  find: sql<WidgetTokenRecord>(`SELECT ${widgetTokens.select()} FROM widget_tokens WHERE token_hash = @hash`),
};

/** `WidgetTokenRepository` on either store. */
export class SqlWidgetTokenRepository implements WidgetTokenRepository {
  constructor(private readonly db: SqlRunner) {}

  async insert(token: WidgetTokenRecord): Promise<void> {
    await this.db.run(statements.insert, token);
  }

  async findByHash(hash: Buffer): Promise<WidgetTokenRecord | undefined> {
    return this.db.get(statements.find, { hash });
  }
}
