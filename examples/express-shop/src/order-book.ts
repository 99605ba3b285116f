import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Session } from '@servicepay/node';
import type { Product } from './catalog.ts';
import Database, { type SqliteConnection } from './sqlite-driver.ts';

/**
 * An order as the shop's pages see it.
 *
 * @example
 * import type { Order } from './order-book.ts';
 * const isPaid = (order: Order) => order.status === 'paid';
 */
export interface Order {
  id: string;
  productId: string;
  amount: number;
  currency: string;
  status: 'pending' | 'paid';
  sessionId: string | null;
  createdAt: string;
  paidAt: string | null;
  /** What settled it: the webhook, or the shop asking the service when the payer came back. */
  paidBy: 'webhook' | 'confirmation' | null;
}

/**
 * What {@link OrderBook.settle} made of a session: `settled` exactly once per order, `already_paid` after that.
 *
 * @example
 * import type { SettleOutcome } from './order-book.ts';
 * const refused = (outcome: SettleOutcome) => outcome === 'amount_mismatch' || outcome === 'session_mismatch';
 */
export type SettleOutcome =
  | 'settled'
  | 'already_paid'
  | 'not_successful'
  | 'unknown_order'
  | 'session_mismatch'
  | 'amount_mismatch';

interface OrderRow {
  id: string;
  product_id: string;
  amount: number;
  currency: string;
  status: 'pending' | 'paid';
  session_id: string | null;
  created_at: string;
  paid_at: string | null;
  paid_by: 'webhook' | 'confirmation' | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS orders (
  id TEXT PRIMARY KEY,
  product_id TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'paid')),
  session_id TEXT UNIQUE,
  created_at TEXT NOT NULL,
  paid_at TEXT,
  paid_by TEXT
);
-- The side effect that must happen once per order (ship it, send the receipt): one row, or none.
CREATE TABLE IF NOT EXISTS fulfilments (
  order_id TEXT PRIMARY KEY REFERENCES orders(id),
  session_id TEXT NOT NULL,
  amount INTEGER NOT NULL,
  currency TEXT NOT NULL,
  created_at TEXT NOT NULL
);
-- Every verified webhook event, once, with how many times it arrived (delivery is at least once).
CREATE TABLE IF NOT EXISTS webhook_events (
  event_id TEXT PRIMARY KEY,
  type TEXT NOT NULL,
  session_id TEXT,
  received_at TEXT NOT NULL,
  deliveries INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

const toOrder = (row: OrderRow): Order => ({
  id: row.id,
  productId: row.product_id,
  amount: row.amount,
  currency: row.currency,
  status: row.status,
  sessionId: row.session_id,
  createdAt: row.created_at,
  paidAt: row.paid_at,
  paidBy: row.paid_by,
});

/**
 * The shop's orders in SQLite. The one rule that matters: an order is paid exactly once, whatever the number
 * or order of webhook deliveries and confirmations, because the change from `pending` to `paid` is one guarded
 * UPDATE in the same transaction as the fulfilment it triggers.
 *
 * @example
 * import { OrderBook } from './order-book.ts';
 * const orders = new OrderBook('data/shop.db');
 * const order = orders.create({ id: 'notebook', name: 'Notebook', amount: 500_000, currency: 'NGN' });
 * orders.close();
 */
export class OrderBook {
  readonly #db: SqliteConnection;

  constructor(path: string) {
    if (path !== ':memory:') {
      // The file holds the webhook signing secret: the owner's alone. Created owner-only before SQLite opens
      // it, so its -wal and -shm files (which SQLite gives the database's permissions) are too.
      mkdirSync(dirname(path), { recursive: true });
      closeSync(openSync(path, 'a', 0o600));
      chmodSync(path, 0o600);
    }
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec(SCHEMA);
  }

  create(product: Product, now = new Date()): Order {
    const id = `order_${randomBytes(9).toString('base64url')}`;
    this.#db
      .prepare('INSERT INTO orders (id, product_id, amount, currency, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, product.id, product.amount, product.currency, now.toISOString());
    return this.get(id) as Order;
  }

  attachSession(orderId: string, sessionId: string): void {
    this.#db.prepare('UPDATE orders SET session_id = ? WHERE id = ?').run(sessionId, orderId);
  }

  get(id: string): Order | undefined {
    const row = this.#db.prepare('SELECT * FROM orders WHERE id = ?').get(id) as OrderRow | undefined;
    return row ? toOrder(row) : undefined;
  }

  /** Fulfilments of an order: 1 once paid, never more. */
  fulfilments(orderId: string): number {
    return (
      this.#db.prepare('SELECT COUNT(*) AS n FROM fulfilments WHERE order_id = ?').get(orderId) as {
        n: number;
      }
    ).n;
  }

  /**
   * Records a verified event (its id, its type, and the session it is about, if any); returns true the first
   * time its id is seen, false for a repeat delivery.
   */
  recordEvent(event: { id: string; type: string; sessionId: string | null }, now = new Date()): boolean {
    const inserted = this.#db
      .prepare(
        'INSERT OR IGNORE INTO webhook_events (event_id, type, session_id, received_at) VALUES (?, ?, ?, ?)',
      )
      .run(event.id, event.type, event.sessionId, now.toISOString());
    if (inserted.changes === 1) return true;
    this.#db
      .prepare('UPDATE webhook_events SET deliveries = deliveries + 1 WHERE event_id = ?')
      .run(event.id);
    return false;
  }

  /**
   * Marks the session's order paid if the session is successful and is for exactly the order's amount and
   * currency. Safe to call any number of times, from the webhook and from a confirmation, in any order.
   */
  settle(session: Session, paidBy: 'webhook' | 'confirmation', now = new Date()): SettleOutcome {
    if (session.status !== 'successful') return 'not_successful';
    const order = this.get(session.reference);
    if (!order) return 'unknown_order';
    if (order.sessionId !== null && order.sessionId !== session.id) return 'session_mismatch';
    if (order.amount !== session.amount || order.currency !== session.currency) return 'amount_mismatch';
    return this.#db.transaction((): SettleOutcome => {
      const paid = this.#db
        .prepare(
          `UPDATE orders SET status = 'paid', paid_at = ?, paid_by = ?, session_id = ?
           WHERE id = ? AND status = 'pending'`,
        )
        .run(session.paidAt ?? now.toISOString(), paidBy, session.id, order.id);
      if (paid.changes === 0) return 'already_paid';
      this.#db
        .prepare(
          'INSERT INTO fulfilments (order_id, session_id, amount, currency, created_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(order.id, session.id, session.amount, session.currency, now.toISOString());
      return 'settled';
    })();
  }

  setting(key: string): string | undefined {
    const row = this.#db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setSetting(key: string, value: string): void {
    this.#db
      .prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = ?')
      .run(key, value, value);
  }

  close(): void {
    this.#db.close();
  }
}
