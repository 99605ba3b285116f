import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SessionRecord } from '../db/sessions.ts';
import { fillSessionId } from '../sessions/redirect-urls.ts';
import { isTerminal } from '../views/session-status.ts';
import { paymentLinkUrl } from '../widget-hosts/hosted-paths.ts';
import type { HostedPagesDeps } from './hosted-pages-deps.ts';
import { escapeHtml, type HostedPage, messagePage, redirect, sendPage } from './page-html.ts';
import { payerAmount } from './payer-amount.ts';

interface CheckoutPageContext {
  environment: 'test' | 'live';
  version: string;
  sessionId: string;
}

/**
 * The session a checkout page names, with the page's sender and whether it is in test mode; answers the 404
 * page itself (and undefined) for an unknown session or one of the other environment's host.
 */
async function openSession(
  req: IncomingMessage,
  res: ServerResponse,
  deps: HostedPagesDeps,
  page: CheckoutPageContext,
): Promise<{ session: SessionRecord; send: (answer: HostedPage) => void; testMode: boolean } | undefined> {
  const send = (answer: HostedPage) => sendPage(req, res, page.version, answer);
  const session = await deps.store.sessions.find(page.sessionId);
  if (!session || session.environment !== page.environment) {
    send(messagePage(404, 'Checkout not found', 'Check the address you were given.', false));
    return undefined;
  }
  return { session, send, testMode: session.environment === 'test' };
}

/**
 * `GET /checkout/<session id>`: the hosted checkout. The page is the same for every session: `hosted.js` reads
 * the client secret from the fragment (which never reached this server), drops it from the address bar and
 * opens the widget's own checkout full page; when the checkout closes it goes to `/checkout/<id>/return`. A
 * session that ended answers 410: its `url` ends with it.
 */
export async function checkoutPage(
  req: IncomingMessage,
  res: ServerResponse,
  deps: HostedPagesDeps,
  page: CheckoutPageContext,
): Promise<void> {
  const found = await openSession(req, res, deps, page);
  if (!found) return;
  const { session, send, testMode } = found;
  if (isTerminal(session.status)) {
    return send(
      messagePage(
        410,
        'This checkout has ended',
        `This payment is ${session.status}. You can close this page.`,
        testMode,
      ),
    );
  }
  const merchantName = (await deps.store.businesses.find(session.businessId))?.name ?? '';
  const amount = payerAmount(session.amount, session.currency, req.headers['accept-language']);
  return send({
    status: 200,
    title: `Pay ${merchantName}`,
    testMode,
    script: `/v${page.version}/hosted.js`,
    body: `<h1>Pay ${escapeHtml(merchantName)}</h1>
<p class="amount">${escapeHtml(amount)}</p>
<p id="hosted-status" role="status" data-return="/checkout/${escapeHtml(session.id)}/return">Opening the checkout…</p>
<p id="hosted-used" hidden>This checkout was opened already: it opens once. If you were paying, the seller is told when the transfer arrives.</p>
<noscript><p>The checkout needs JavaScript. Turn it on and open the link again.</p></noscript>`,
  });
}

/**
 * `GET /checkout/<session id>/return`: where the hosted checkout goes when it closes. The session says where
 * the payer goes, never the browser: paid → `successUrl` (`{SESSION_ID}` filled in); cancelled or expired →
 * `cancelUrl`; without one, or while the session is still open, a page of the service says what happened.
 */
export async function checkoutReturn(
  req: IncomingMessage,
  res: ServerResponse,
  deps: HostedPagesDeps,
  page: CheckoutPageContext,
): Promise<void> {
  const found = await openSession(req, res, deps, page);
  if (!found) return;
  const { session, send, testMode } = found;
  // Read only for a page that names the merchant: a redirect needs none.
  const merchant = async () => (await deps.store.businesses.find(session.businessId))?.name ?? 'the seller';
  switch (session.status) {
    case 'successful':
      if (session.successUrl !== null) return redirect(res, fillSessionId(session.successUrl, session.id));
      return send(
        messagePage(
          200,
          'Payment received',
          `${await merchant()} has your payment. You can close this page.`,
          testMode,
        ),
      );
    case 'cancelled':
    case 'expired': {
      if (session.cancelUrl !== null) return redirect(res, fillSessionId(session.cancelUrl, session.id));
      // A payment link's session ended with nowhere to go back to: the link's page, while it still takes
      // payments, is where the payer can start again (a new session, a new account).
      const link =
        session.paymentLinkId === null
          ? undefined
          : await deps.store.paymentLinks.find(session.paymentLinkId);
      return send(
        messagePage(
          200,
          session.status === 'cancelled' ? 'Payment cancelled' : 'Payment expired',
          session.status === 'cancelled'
            ? 'You cancelled this payment. No money was taken.'
            : 'The time to pay ran out before a transfer arrived. No money was taken.',
          testMode,
          link?.active ? { href: paymentLinkUrl('', link.id), label: 'Start the payment again' } : undefined,
        ),
      );
    }
    default: {
      const merchantName = await merchant();
      // The checkout's own words for its way back ("Back to <merchant>", "Back to the seller" without a name:
      // widget/src/texts.ts), so the payer reads one wording on the checkout and on this page.
      const back =
        session.cancelUrl === null
          ? undefined
          : { href: fillSessionId(session.cancelUrl, session.id), label: `Back to ${merchantName}` };
      return send(
        messagePage(
          200,
          'Payment not finished',
          `No payment has arrived yet. If you sent the transfer, ${merchantName} is told as soon as it arrives.`,
          testMode,
          back,
        ),
      );
    }
  }
}
