import type { SimulatedBank } from '../bank/simulated-bank.ts';
import type { PortalSessions } from '../businesses/portal-sessions.ts';
import type { Store } from '../db/store.ts';
import type { Webhooks } from '../events/webhooks.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import type { RateLimiter } from '../internal/sliding-window-limiter.ts';
import type { RequestLog } from '../middleware/request-log.ts';
import type { PaymentLinkService } from '../payment-links/payment-link-service.ts';
import type { RefundService } from '../refunds/refund-service.ts';
import type { SessionService } from '../sessions/session-service.ts';
import type { TestEndings } from '../sessions/test-endings.ts';
import type { TestTransfers } from '../sessions/test-transfers.ts';

/**
 * What the portal needs from the service (`createService` passes it to `portalRoutes`). Here, beside the
 * operations, because the portal's pages are operations too: their handlers receive `PortalServices`.
 */
export interface PortalDeps {
  /** Read only: every write goes through a service. */
  store: Store;
  clock: Clock;
  logger: Logger;
  sessions: SessionService;
  /** The session page's refunds and its Refund form. */
  refunds: RefundService;
  /** The Payment links page (issue 36): create, deactivate, the QR code. */
  paymentLinks: PaymentLinkService;
  /** Test mode's "expire now", for the session page's buttons. */
  testEndings: TestEndings;
  webhooks: Webhooks;
  bank: SimulatedBank;
  secretBox: SecretBox;
  /** Failed sign-ins count here, per address, with the API's failed authentications. */
  failedAuthLimiter: RateLimiter;
  /** How long a delivery is retried on this service's schedule (`retrySpanMs`), for the Webhooks page. */
  webhookRetrySpanMs: number;
  /** The request log's writer: flushed before the Requests page reads, so a request just made is there. */
  requestLog?: RequestLog | undefined;
}

/** What a portal operation's handler receives: the deps and the services the pages change things through (made by `portalRoutes`). */
export interface PortalServices extends PortalDeps {
  /** Sign-in, sign-out, the idle clock, rolling a key from the portal. */
  portalSessions: PortalSessions;
  /** The Test bank's transfers, as `POST /api/test/transfers` makes them. */
  testTransfers: TestTransfers;
}
