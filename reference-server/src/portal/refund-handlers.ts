import type { RequestHandler } from 'express';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import { asHttpError } from '../middleware/domain-error-status.ts';
import type { RefundService } from '../refunds/refund-service.ts';
import type { SessionService } from '../sessions/session-service.ts';
import { callerOf } from './caller.ts';
import { RefundFormSchema } from './forms.ts';
import { sendPage } from './layout.ts';
import type { RefundReview } from './pages/refunds-section.ts';
import { sessionDetailPage } from './pages/sessions-page.ts';
import { type PortalContext, portalContext } from './portal-auth.ts';
import type { PortalRouteName } from './portal-route-table.ts';

/** What the session page's Refund form needs from the service. */
export interface RefundHandlerDeps {
  store: Store;
  sessions: SessionService;
  refunds: RefundService;
}

/**
 * The session page's Refund form (`POST /portal/sessions/{id}/refunds`): `review` shows the page again with
 * what would be refunded and a confirm button; `confirm` refunds through `RefundService` (as the API does:
 * the same checks, the KYC rule for live, the audit entry naming the portal session's key) and redirects to
 * the session page, which shows how the refund ended. A refusal (more than is left, a session not paid) shows
 * the page again with the service's message.
 *
 * @example
 * router.post('/sessions/:id/refunds', ...checks, refundHandlers(deps).refund);
 */
export function refundHandlers(
  deps: RefundHandlerDeps,
): Pick<Record<PortalRouteName, RequestHandler>, 'refund'> {
  const { store, sessions, refunds } = deps;

  /** The session page with its refunds, a review to confirm or a refusal to read. */
  const sessionPage = async (
    context: PortalContext,
    sessionId: string,
    options: { review?: RefundReview; refusal?: string },
  ) => {
    const caller = callerOf(context);
    const session = await sessions.retrieve(caller, sessionId);
    const history = await store.events.forSessionAfter(session.id, 0);
    const listed = await refunds.list(caller, { sessionId, limit: 100 });
    return sessionDetailPage(
      context,
      session,
      history,
      options.refusal ? { tone: 'bad', text: options.refusal } : undefined,
      { refunds: listed.data, ...(options.review ? { review: options.review } : {}) },
    );
  };

  return {
    refund: async (req, res) => {
      const context = portalContext(res);
      const sessionId = String(req.params.id);
      // Another business's or environment's session is refused before the form is looked at.
      await sessions.retrieve(callerOf(context), sessionId);
      const form = RefundFormSchema.parse(req.body);
      const requested = form.amount === '' ? undefined : Number(form.amount);
      const reason = form.reason === '' ? undefined : form.reason;
      try {
        if (form.step === 'review') {
          const review = await refunds.review(callerOf(context), sessionId, requested);
          return sendPage(res, await sessionPage(context, sessionId, { review: { ...review, reason } }));
        }
        if (form.expectedRefunded === undefined) {
          throw new HttpError(400, 'validation_failed', 'Review the refund first, then confirm it.');
        }
        const refund = await refunds.create(
          callerOf(context),
          sessionId,
          { ...(requested === undefined ? {} : { amount: requested }), ...(reason ? { reason } : {}) },
          { expectedAmountRefunded: Number(form.expectedRefunded) },
        );
        // Redirect after the post: a reload shows the refund and refunds nothing again.
        res.redirect(303, `/portal/sessions/${encodeURIComponent(sessionId)}?refund=${refund.id}`);
      } catch (raised) {
        const error = asHttpError(raised);
        if (!(error instanceof HttpError) || (error.status !== 400 && error.status !== 409)) throw raised;
        sendPage(res, await sessionPage(context, sessionId, { refusal: error.message }), error.status);
      }
    },
  };
}
