import type { RequestHandler } from 'express';
import { assertOwnedBy } from '../businesses/ownership.ts';
import { REQUEST_LOG_KEEP } from '../db/request-log.ts';
import type { Store } from '../db/store.ts';
import { notFound } from '../errors.ts';
import { EventHistory } from '../events/event-history.ts';
import type { Webhooks } from '../events/webhooks.ts';
import { unknownCursor } from '../internal/pagination.ts';
import type { RequestLog } from '../middleware/request-log.ts';
import { callerOf } from './caller.ts';
import { EventQuerySchema, EventsQuerySchema, RequestsQuerySchema, ResendEventFormSchema } from './forms.ts';
import { sendPage } from './layout.ts';
import { eventDetailPage, eventsPage } from './pages/events-page.ts';
import { requestDetailPage, requestsPage } from './pages/requests-page.ts';
import { portalContext } from './portal-auth.ts';
import type { PortalRouteName } from './portal-route-table.ts';

/** What the Events and Requests pages need from the service. */
export interface ActivityDeps {
  store: Store;
  webhooks: Webhooks;
  /** The request log's writer: flushed before the Requests page reads, so a request just made is there. */
  requestLog?: RequestLog | undefined;
}

type ActivityHandlers = Pick<
  Record<PortalRouteName, RequestHandler>,
  'events' | 'event' | 'resendEvent' | 'requests' | 'request'
>;

/** Rows per page of both lists. */
const PAGE_SIZE = 20;

/**
 * What happened in the session's environment: its events (each with its payload, deliveries and a resend) and
 * the API requests made with its keys (the request log). Each reads the session's environment only; a resource
 * of another answers 403 through the services' own scope.
 *
 * @example
 * const handlers = activityHandlers({ store, webhooks, requestLog });
 * router.get('/events', handlers.events);
 */
export function activityHandlers(deps: ActivityDeps): ActivityHandlers {
  const { store, webhooks, requestLog } = deps;
  const history = new EventHistory(store);
  const orUndefined = (value: string | undefined) => (value === '' ? undefined : value);

  return {
    events: async (req, res) => {
      const context = portalContext(res);
      const query = EventsQuerySchema.parse(req.query);
      const type = orUndefined(query.type);
      const startingAfter = orUndefined(query.startingAfter);
      const list = await history.list(callerOf(context), { limit: PAGE_SIZE, type, startingAfter });
      sendPage(res, eventsPage(context, list, { type, startingAfter }));
    },

    event: async (req, res) => {
      const context = portalContext(res);
      const detail = await history.detail(callerOf(context), String(req.params.id));
      const query = EventQuerySchema.safeParse(req.query);
      const resent = query.success && query.data.resent !== undefined ? Number(query.data.resent) : undefined;
      sendPage(res, eventDetailPage(context, detail, resent));
    },

    resendEvent: async (req, res) => {
      const context = portalContext(res);
      const parsed = ResendEventFormSchema.parse(req.body);
      const id = String(req.params.id);
      // What POST /api/events/{id}/resend does: a new delivery (same event id) to the one endpoint, or to every
      // enabled endpoint that takes the type; another environment's event or endpoint is refused.
      const result = await webhooks.resend(callerOf(context), id, orUndefined(parsed.endpointId));
      // Redirect after the post, so a reload shows the result and sends nothing again.
      res.redirect(303, `/portal/events/${encodeURIComponent(id)}?resent=${result.deliveries.length}`);
    },

    requests: async (req, res) => {
      const context = portalContext(res);
      const query = RequestsQuerySchema.parse(req.query);
      const filters = {
        requestId: orUndefined(query.requestId),
        status: query.status === '' ? undefined : query.status,
        startingAfter: orUndefined(query.startingAfter),
      };
      // Entries wait a moment before they are written: a request made just now is on this page.
      await requestLog?.flush();
      let beforeSeq: number | undefined;
      if (filters.startingAfter !== undefined) {
        const cursor = await store.requestLog.find(filters.startingAfter);
        if (
          !cursor ||
          cursor.businessId !== context.business.id ||
          cursor.environment !== context.environment
        ) {
          throw unknownCursor('a request of this list');
        }
        beforeSeq = cursor.seq;
      }
      const rows = await store.requestLog.list({
        businessId: context.business.id,
        environment: context.environment,
        requestId: filters.requestId,
        statusClass: filters.status,
        beforeSeq,
        limit: PAGE_SIZE + 1,
      });
      const hasMore = rows.length > PAGE_SIZE;
      const data = rows.slice(0, PAGE_SIZE);
      const list = {
        data,
        pagination: { hasMore, nextCursor: hasMore ? (data.at(-1)?.requestId ?? null) : null },
      };
      sendPage(res, requestsPage(context, list, filters, REQUEST_LOG_KEEP));
    },

    request: async (req, res) => {
      const context = portalContext(res);
      await requestLog?.flush();
      const entry = await store.requestLog.find(String(req.params.id));
      if (!entry) throw notFound('request in the log (it keeps the most recent ones only)');
      assertOwnedBy(callerOf(context), entry, 'request');
      sendPage(res, requestDetailPage(context, entry));
    },
  };
}
