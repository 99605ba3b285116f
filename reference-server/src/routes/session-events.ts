import { Router } from 'express';
import { HttpError } from '../errors.ts';
import type { PushStreams } from '../events/push-streams.ts';
import type { AuthDeps } from '../middleware/authenticate.ts';
import { requireWidgetToken, widgetCaller } from '../middleware/authenticate.ts';

/** Query parameter names that would put a credential in a URL (logs, Referer, browser history). */
const CREDENTIAL_PARAMS = new Set(['token', 'access_token', 'widget_token', 'authorization', 'auth', 'key']);

/**
 * `GET /api/widget/sessions/{id}/events`: the checkout's real-time push, as server-sent events. The widget
 * token goes in `Authorization: Bearer wt_…`, never in the URL (a URL carrying one is refused with 400, before
 * anything else). `Last-Event-ID` resumes after a transition the client already has.
 *
 * @example
 * const deps = { ...appDeps, extraRoutes: [sessionEventRoutes(pushStreams)] };
 */
export function sessionEventRoutes(streams: PushStreams): (auth: AuthDeps) => Router {
  return (auth) => {
    const router = Router();

    router.get(
      '/api/widget/sessions/:id/events',
      (req, _res, next) => {
        for (const [name, value] of Object.entries(req.query)) {
          if (
            CREDENTIAL_PARAMS.has(name.toLowerCase()) ||
            (typeof value === 'string' && value.startsWith('wt_'))
          ) {
            throw new HttpError(
              400,
              'bad_request',
              'Send the widget token in the Authorization header (Bearer wt_...), never in the URL.',
            );
          }
        }
        next();
      },
      requireWidgetToken(auth),
      (req, res) => {
        const header = req.get('Last-Event-ID');
        let lastEventId: number | undefined;
        if (header !== undefined && header.trim() !== '') {
          if (!/^\d{1,15}$/.test(header.trim())) {
            throw new HttpError(
              400,
              'validation_failed',
              'Last-Event-ID must be an event id from this stream.',
              [{ path: 'Last-Event-ID', message: 'must be a non-negative integer' }],
            );
          }
          lastEventId = Number(header.trim());
        }
        streams.open(res, widgetCaller(res).session.id, lastEventId);
      },
    );

    return router;
  };
}
