import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { addressKeyOf } from '../internal/peer-address.ts';
import type { RateLimiter } from '../internal/sliding-window-limiter.ts';
import type { PaymentLinkService } from '../payment-links/payment-link-service.ts';
import type { HostedPath } from '../widget-hosts/hosted-paths.ts';
import { checkoutPage, checkoutReturn } from './checkout-page.ts';
import type { LinkFormTokens } from './link-form-token.ts';
import { linkPage } from './link-page.ts';
import { messagePage, sendPage } from './page-html.ts';

/** What the payer-facing pages read and call. */
export interface HostedPagesDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  paymentLinks: PaymentLinkService;
  formTokens: LinkFormTokens;
  /**
   * The link pages' session budgets (per link, and per client address across links), and `pages`: the
   * checkout's per-address budget (`checkout:<address>`, the one bootstrap spends), which every page spends.
   */
  limiters: { perLink: RateLimiter; perAddress: RateLimiter; pages: RateLimiter };
  /** Whether a peer is a proxy whose `X-Forwarded-For` is believed (`SERVICEPAY_TRUST_PROXY`). */
  trustedProxy: (address: string) => boolean;
}

/** What a widget host tells a page: its environment, origin and the widget version its assets are under. */
export interface HostedRequest {
  environment: 'test' | 'live';
  origin: string;
  version: string;
  path: HostedPath;
}

/**
 * The payer's address: the peer, or, behind trusted proxies, the nearest address in `X-Forwarded-For` that is
 * not one of them (as express reads it for the API).
 */
function clientAddress(req: IncomingMessage, trusted: (address: string) => boolean): string {
  let address = req.socket.remoteAddress ?? '';
  const forwarded = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  while (trusted(address) && forwarded.length > 0) address = forwarded.pop() as string;
  return addressKeyOf(address);
}

/**
 * The widget hosts' payer-facing pages (issue 36): the hosted checkout, its return, and the payment links'
 * pages. A failure the payer cannot act on is logged and answered with a plain 500 page, never a stack.
 *
 * @example
 * const pages = hostedPages(deps);
 * await pages(req, res, { environment: 'test', origin, version: '0.1.0', path: { page: 'link', linkId } });
 */
export function hostedPages(deps: HostedPagesDeps) {
  return async (req: IncomingMessage, res: ServerResponse, request: HostedRequest): Promise<void> => {
    const { path, environment, version } = request;
    try {
      if (req.method === 'POST' && path.page !== 'link') {
        res.setHeader('Allow', 'GET, HEAD');
        return sendPage(req, res, version, messagePage(405, 'Not allowed', 'Open the page instead.', false));
      }
      const address = clientAddress(req, deps.trustedProxy);
      // Every page reads the database: a page view spends the checkout's budget of the payer's address.
      const budget = await deps.limiters.pages.hit(`checkout:${address}`, deps.clock.now());
      if (!budget.allowed) {
        const page = messagePage(429, 'Too many requests', 'Wait a minute, then open the page again.', false);
        return sendPage(req, res, version, {
          ...page,
          headers: { 'Retry-After': String(budget.resetSeconds) },
        });
      }
      if (path.page === 'checkout') {
        return await checkoutPage(req, res, deps, { environment, version, sessionId: path.sessionId });
      }
      if (path.page === 'checkout-return') {
        return await checkoutReturn(req, res, deps, { environment, version, sessionId: path.sessionId });
      }
      return await linkPage(req, res, deps, { ...request, linkId: path.linkId, address });
    } catch (error) {
      deps.logger.error('hosted page failed', {
        path: req.url?.split('?')[0],
        error: error instanceof Error ? error.message : String(error),
      });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      return sendPage(
        req,
        res,
        version,
        messagePage(500, 'Something went wrong', 'Try again in a moment.', environment === 'test'),
      );
    }
  };
}
