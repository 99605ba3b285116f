import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import type { RateLimiter } from '../internal/sliding-window-limiter.ts';
import type { PaymentLinkService } from '../payment-links/payment-link-service.ts';
import type { LinkFormTokens } from './link-form-token.ts';
import type { LinkSubmissions } from './link-submissions.ts';

/** What the payer-facing pages read and call. */
export interface HostedPagesDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  paymentLinks: PaymentLinkService;
  formTokens: LinkFormTokens;
  /** The answers of the link forms' submissions, so one submission makes one session. */
  submissions: LinkSubmissions;
  /**
   * The link pages' session budgets (per link, and per client address across links), and `pages`: the
   * checkout's per-address budget (`checkout:<address>`, the one bootstrap spends), which every page spends.
   */
  limiters: { perLink: RateLimiter; perAddress: RateLimiter; pages: RateLimiter };
  /** Whether a peer is a proxy whose `X-Forwarded-For` is believed (`SERVICEPAY_TRUST_PROXY`). */
  trustedProxy: (address: string) => boolean;
}
