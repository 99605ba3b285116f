import {
  CreateWebhookEndpointParamsSchema,
  type KeyKind,
  type Refund,
  type Session,
} from '@servicepay/node/protocol';
import type { RequestHandler } from 'express';
import type { SimulatedBank } from '../bank/simulated-bank.ts';
import { rollKeyIn } from '../businesses/onboarding.ts';
import type { Store } from '../db/store.ts';
import { HttpError } from '../errors.ts';
import type { Webhooks } from '../events/webhooks.ts';
import type { Clock } from '../internal/clock.ts';
import type { Logger } from '../internal/logger.ts';
import { sha256 } from '../internal/random.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import { asHttpError } from '../middleware/domain-error-status.ts';
import type { RefundService } from '../refunds/refund-service.ts';
import { transferAtBank } from '../routes/bank.ts';
import type { SessionService } from '../sessions/session-service.ts';
import type { TestEndings } from '../sessions/test-endings.ts';
import { actorOf, callerOf } from './caller.ts';
import { formatMoney } from './format.ts';
import {
  CreateEndpointFormSchema,
  DeleteEndpointFormSchema,
  DeliveriesQuerySchema,
  EndpointStateFormSchema,
  ExpireFormSchema,
  ResendFormSchema,
  RevealSecretFormSchema,
  RollKeyFormSchema,
  SessionDetailQuerySchema,
  SessionsQuerySchema,
  TransferFormSchema,
  WebhooksQuerySchema,
} from './forms.ts';
import { html, type SafeHtml } from './html.ts';
import { sendPage } from './layout.ts';
import { bankPage, takesTransfer } from './pages/bank-page.ts';
import { keysPage } from './pages/keys-page.ts';
import { kycPage } from './pages/kyc-page.ts';
import { sessionDetailPage, sessionsPage } from './pages/sessions-page.ts';
import { endpointPage, webhooksPage } from './pages/webhooks-page.ts';
import { type PortalContext, portalContext } from './portal-auth.ts';
import type { PortalRouteName } from './portal-route-table.ts';

/** What the signed-in pages need from the service. */
export interface PageDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  sessions: SessionService;
  /** The session page's refunds (and its Refund form, `refund-handlers.ts`). */
  refunds: RefundService;
  /** Test mode's "expire now", for the session page's buttons. */
  testEndings: TestEndings;
  webhooks: Webhooks;
  bank: SimulatedBank;
  secretBox: SecretBox;
  /** How long a delivery is retried on this service's schedule (`retrySpanMs`), for the Webhooks page. */
  webhookRetrySpanMs: number;
}

type PageHandlers = Pick<
  Record<PortalRouteName, RequestHandler>,
  | 'keys'
  | 'rollKey'
  | 'webhooks'
  | 'createEndpoint'
  | 'endpoint'
  | 'revealSecret'
  | 'endpointState'
  | 'deleteEndpoint'
  | 'resend'
  | 'sessions'
  | 'session'
  | 'bank'
  | 'transfer'
  | 'expire'
  | 'kyc'
>;

/**
 * The signed-in pages and forms: keys, webhooks, sessions, the test bank, KYC. Each reads and changes the
 * session's environment only (`portalRoutes` has already refused a request naming another one).
 *
 * @example
 * const handlers = pageHandlers({ store, clock, logger, sessions, webhooks, bank, secretBox, webhookRetrySpanMs });
 * router.get('/keys', handlers.keys);
 */
export function pageHandlers(deps: PageDeps): PageHandlers {
  const { store, clock, logger, sessions, webhooks, bank, secretBox } = deps;

  const keysOf = async (context: PortalContext) => {
    const of = (kind: KeyKind) => store.apiKeys.active(context.business.id, context.environment, kind);
    return { secret: await of('secret'), publishable: await of('publishable') };
  };

  /** The Webhooks page with the environment's endpoints as they are now. */
  const webhooksView = async (context: PortalContext, options: Parameters<typeof webhooksPage>[3] = {}) =>
    webhooksPage(
      context,
      (await webhooks.list(callerOf(context), { limit: 100 })).data,
      deps.webhookRetrySpanMs,
      options,
    );

  return {
    keys: async (_req, res) => {
      const context = portalContext(res);
      sendPage(res, keysPage(context, await keysOf(context)));
    },

    rollKey: async (req, res) => {
      const parsed = RollKeyFormSchema.parse(req.body);
      const context = portalContext(res);
      const rolled = await store.writes.run(async (tx) => {
        const result = await rollKeyIn(
          tx,
          context.business.id,
          context.environment,
          parsed.kind,
          clock.now(),
          actorOf(context),
        );
        // Rolling the key this session was opened with ends every other portal session opened with it; the
        // one that rolled it moves to the new key.
        const current = await tx.portalSessions.find(context.idHash);
        const replacement = result && (await tx.apiKeys.findByHash(sha256(result.key)));
        if (current && current.keyRevokedAt !== null && replacement) {
          await tx.portalSessions.rebind(context.idHash, replacement.id);
        }
        return result;
      });
      if (!rolled) throw new HttpError(404, 'not_found', 'No such business.');
      logger.info('portal key rolled', {
        businessId: context.business.id,
        environment: context.environment,
        kind: parsed.kind,
      });
      // The new key is in this answer only (Cache-Control: no-store): never in a URL, a cookie or the database.
      sendPage(res, keysPage(context, await keysOf(context), rolled));
    },

    webhooks: async (req, res) => {
      const context = portalContext(res);
      const query = WebhooksQuerySchema.safeParse(req.query);
      sendPage(res, await webhooksView(context, { deleted: query.success && query.data.deleted === '1' }));
    },

    createEndpoint: async (req, res) => {
      const context = portalContext(res);
      const parsed = CreateEndpointFormSchema.parse(req.body);
      const params = CreateWebhookEndpointParamsSchema.safeParse({
        url: parsed.url,
        ...(parsed.description ? { description: parsed.description } : {}),
      });
      const again = async (message: string) =>
        sendPage(res, await webhooksView(context, { error: message, url: parsed.url }), 400);
      if (!params.success) {
        // The contract's own words: the same rule as POST /api/webhooks.
        const problem = params.error.issues.find((issue) => issue.path[0] === 'url')?.message;
        return again(
          `${problem ? `The URL ${problem}. ` : ''}Enter a full http(s) URL, such as https://example.com/webhooks.`,
        );
      }
      try {
        const created = await webhooks.create(callerOf(context), params.data);
        const { secret, ...endpoint } = created;
        sendPage(res, await webhooksView(context, { created: { endpoint, secret } }), 201);
      } catch (error) {
        const refusal = asHttpError(error);
        if (refusal instanceof HttpError && refusal.status === 400) return again(refusal.message);
        throw error;
      }
    },

    endpoint: async (req, res) => {
      const context = portalContext(res);
      const query = DeliveriesQuerySchema.parse(req.query);
      const id = String(req.params.id);
      const endpoint = await webhooks.retrieve(callerOf(context), id);
      const deliveries = await webhooks.listDeliveries(callerOf(context), id, {
        limit: 20,
        startingAfter: query.startingAfter,
      });
      sendPage(
        res,
        endpointPage(context, endpoint, deliveries, {
          ...(query.resent ? { resent: query.resent } : {}),
          ...(query.changed ? { changed: query.changed } : {}),
        }),
      );
    },

    revealSecret: async (req, res) => {
      const context = portalContext(res);
      RevealSecretFormSchema.parse(req.body);
      const id = String(req.params.id);
      // The caller's own endpoint (404/403 otherwise), with its sealed secret.
      const record = await webhooks.owned(callerOf(context), id);
      const endpoint = await webhooks.retrieve(callerOf(context), id);
      const secret = secretBox.open(record.secretCiphertext);
      logger.info('portal webhook secret revealed', { businessId: context.business.id, endpointId: id });
      const deliveries = await webhooks.listDeliveries(callerOf(context), id, { limit: 20 });
      sendPage(res, endpointPage(context, endpoint, deliveries, { secret }));
    },

    endpointState: async (req, res) => {
      const context = portalContext(res);
      const parsed = EndpointStateFormSchema.parse(req.body);
      const id = String(req.params.id);
      const enabled = parsed.enabled === 'true';
      await webhooks.update(callerOf(context), id, { enabled });
      res.redirect(
        303,
        `/portal/webhooks/${encodeURIComponent(id)}?changed=${enabled ? 'enabled' : 'disabled'}`,
      );
    },

    deleteEndpoint: async (req, res) => {
      const context = portalContext(res);
      const id = String(req.params.id);
      // Another business's endpoint answers 403 and an unknown one 404, before the form is looked at.
      const endpoint = await webhooks.retrieve(callerOf(context), id);
      const parsed = DeleteEndpointFormSchema.safeParse(req.body);
      if (!parsed.success) {
        const deliveries = await webhooks.listDeliveries(callerOf(context), id, { limit: 20 });
        return sendPage(
          res,
          endpointPage(context, endpoint, deliveries, {
            error: 'Tick the box to confirm, then delete the endpoint.',
          }),
          400,
        );
      }
      // What DELETE /api/webhooks/{id} does: pending deliveries fail, the audit log records it.
      await webhooks.remove(callerOf(context), id);
      logger.info('portal webhook endpoint deleted', { businessId: context.business.id, endpointId: id });
      res.redirect(303, '/portal/webhooks?deleted=1');
    },

    resend: async (req, res) => {
      const context = portalContext(res);
      const parsed = ResendFormSchema.parse(req.body);
      const id = String(req.params.id);
      const result = await webhooks.resend(callerOf(context), parsed.eventId, id);
      const resent = result.deliveries[0];
      res.redirect(303, `/portal/webhooks/${encodeURIComponent(id)}${resent ? `?resent=${resent}` : ''}`);
    },

    sessions: async (req, res) => {
      const context = portalContext(res);
      const query = SessionsQuerySchema.parse(req.query);
      const status = query.status === '' ? undefined : query.status;
      const reference = query.reference === '' ? undefined : query.reference;
      const startingAfter = query.startingAfter === '' ? undefined : query.startingAfter;
      const list = await sessions.list(callerOf(context), { limit: 20, status, reference, startingAfter });
      sendPage(res, sessionsPage(context, list, { status, reference, startingAfter }));
    },

    session: async (req, res) => {
      const context = portalContext(res);
      const session = await sessions.retrieve(callerOf(context), String(req.params.id));
      const history = await store.events.forSessionAfter(session.id, 0);
      const refunds = (await deps.refunds.list(callerOf(context), { sessionId: session.id, limit: 100 }))
        .data;
      const query = SessionDetailQuerySchema.safeParse(req.query);
      const refunded = query.success && refunds.find((refund) => refund.id === query.data.refund);
      sendPage(
        res,
        sessionDetailPage(
          context,
          session,
          history,
          refunded
            ? refundNotice(refunded)
            : query.success
              ? (transferNotice(session, query.data) ?? endedNotice(session, query.data))
              : undefined,
          { refunds },
        ),
      );
    },

    bank: async (_req, res) => {
      const context = portalContext(res);
      let open: Session[] = [];
      if (context.environment === 'test') {
        const caller = callerOf(context);
        const waiting = (await sessions.list(caller, { limit: 50, status: 'awaiting_payment' })).data;
        const mismatched = (await sessions.list(caller, { limit: 50, status: 'mismatch' })).data;
        open = [...waiting, ...mismatched]
          .filter(takesTransfer)
          .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
      }
      sendPage(res, bankPage(context, open));
    },

    transfer: async (req, res) => {
      const context = portalContext(res);
      const parsed = TransferFormSchema.parse(req.body);
      // Simulated money only ever reaches test sessions, and only from a session signed in with a test key.
      if (context.environment !== 'test') {
        throw new HttpError(
          403,
          'environment_mismatch',
          'The test bank moves simulated money to test sessions only. Sign in with your test secret key (sk_test_…) to use it.',
        );
      }
      const session = await sessions.retrieve(callerOf(context), parsed.sessionId);
      if (!takesTransfer(session) || !session.virtualAccount) {
        throw new HttpError(
          409,
          'session_not_active',
          `This session takes no transfer now (it is ${session.status}).`,
        );
      }
      let amount = session.amount;
      if (parsed.choice === 'other') {
        amount = Number(parsed.amount ?? '');
        if (!Number.isSafeInteger(amount) || amount <= 0) {
          throw new HttpError(
            400,
            'validation_failed',
            'Enter the amount as a whole number of minor units, above 0.',
          );
        }
      }
      const transfer = await transferAtBank(bank, session.virtualAccount.accountNumber, amount);
      const params = new URLSearchParams({ sent: String(amount), outcome: transfer.outcome });
      if (transfer.returnReason) params.set('reason', transfer.returnReason);
      // Redirect after the post, so a reload shows the result and never sends the money again.
      res.redirect(303, `/portal/sessions/${encodeURIComponent(session.id)}?${params}`);
    },

    expire: async (req, res) => {
      const context = portalContext(res);
      const parsed = ExpireFormSchema.parse(req.body);
      // Test mode only, like the test bank: only a session signed in with a test key.
      if (context.environment !== 'test') {
        throw new HttpError(
          403,
          'environment_mismatch',
          'Only test sessions can be expired on demand. Sign in with your test secret key (sk_test_…) to use it.',
        );
      }
      const session = await deps.testEndings.expire(callerOf(context), String(req.params.id), parsed.ending);
      // Redirect after the post, so a reload shows the result and ends nothing again.
      res.redirect(303, `/portal/sessions/${encodeURIComponent(session.id)}?ended=${parsed.ending}`);
    },

    kyc: (_req, res) => {
      sendPage(res, kycPage(portalContext(res)));
    },
  };
}

/** The note after the Refund form's confirm: how the bank answered. */
function refundNotice(refund: Refund): { tone: 'good' | 'bad' | 'info'; text: SafeHtml } {
  const amount = formatMoney(refund.amount, refund.currency);
  if (refund.status === 'succeeded')
    return { tone: 'good', text: html`Refunded ${amount}: the payer's account has it back (${refund.id}).` };
  if (refund.status === 'failed')
    return {
      tone: 'bad',
      text: html`The bank refused the refund of ${amount} (${refund.failureReason ?? 'refused'}): nothing moved, and the amount can be refunded again.`,
    };
  return {
    tone: 'info',
    text: html`Refund of ${amount} sent to the bank; its answer is on its way (${refund.id}).`,
  };
}

/** The note after an "expire now" button: which clock ended, and the session's status now. */
function endedNotice(
  session: Session,
  query: { ended?: 'session' | 'account' | undefined },
): { tone: 'info'; text: SafeHtml } | undefined {
  if (!query.ended) return undefined;
  return query.ended === 'session'
    ? { tone: 'info', text: html`The session's lifetime was ended now. It is ${session.status}.` }
    : {
        tone: 'info',
        text: html`The account's countdown was ended now. The session is ${session.status}: the checkout offers a new account.`,
      };
}

function transferNotice(
  session: Session,
  query: { sent?: string | undefined; outcome?: string | undefined; reason?: string | undefined },
): { tone: 'good' | 'warn'; text: SafeHtml } | undefined {
  if (!query.sent || !query.outcome) return undefined;
  const sent = formatMoney(Number(query.sent), session.currency);
  if (query.outcome === 'credited') {
    return {
      tone: 'good',
      text: html`Sent ${sent}: the bank credited it. The session is now ${session.status}.`,
    };
  }
  if (query.reason === 'amount_mismatch') {
    return {
      tone: 'warn',
      text: html`Sent ${sent}: not the session amount, so the bank returned it. The session is now ${session.status}.`,
    };
  }
  return { tone: 'warn', text: html`Sent ${sent}: the account was closed, so the bank returned it.` };
}
