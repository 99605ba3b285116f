import type { BankNotificationProcessor } from '../bank/notification-processor.ts';
import type { SimulatedBank } from '../bank/simulated-bank.ts';
import type { Store } from '../db/store.ts';
import type { PushStreams } from '../events/push-streams.ts';
import type { Webhooks } from '../events/webhooks.ts';
import type { ExportService } from '../exports/export-service.ts';
import type { BalanceService } from '../ledger/balance-service.ts';
import type { PaymentLinkService } from '../payment-links/payment-link-service.ts';
import type { RefundService } from '../refunds/refund-service.ts';
import type { SessionService } from '../sessions/session-service.ts';
import type { TestEndings } from '../sessions/test-endings.ts';
import type { HealthChecks } from './health.ts';

/**
 * The parts of the service the API's handlers call, given to `mountOperations` by `createApp` (the portal's
 * pages get `PortalServices`, `portal-deps.ts`). A handler takes what it needs by name.
 *
 * @example
 * handler: async ({ caller, query }, { balance }) => ({ page: await balance.list(caller, query) }),
 */
export interface OperationDeps {
  store: Store;
  sessions: SessionService;
  refunds: RefundService;
  paymentLinks: PaymentLinkService;
  /** The ledger's reads: entries and the balance (`routes/balance-transactions.ts`). */
  balance: BalanceService;
  /** The CSV exports (`routes/exports.ts`). */
  exports: ExportService;
  testEndings: TestEndings;
  webhooks: Webhooks;
  pushStreams: PushStreams;
  bank: SimulatedBank;
  processor: BankNotificationProcessor;
  /** The simulated bank's counter is served only when the configuration opens it. */
  publicBankCounter: boolean;
  /** What `GET /health` and `GET /health/ready` ask, keeping their own state (`routes/health.ts`). */
  health: HealthChecks;
  /** The OpenAPI document, served at `/openapi.json`. */
  openApiDocument: () => unknown;
}
