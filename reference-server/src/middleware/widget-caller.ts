import type { SessionRecord } from '../db/sessions.ts';

/**
 * The open checkout of one session, once `requireWidgetToken` let the request through. Its own module, below
 * both `authenticate.ts` (which builds it) and `request-context.ts` (which keeps it), so neither imports the
 * other for it: the type alone had closed an import circle through the error handler and the rate limiter.
 *
 * @example
 * import type { WidgetCaller } from './widget-caller.ts';
 * const sessionOf = (caller: WidgetCaller) => caller.session.id;
 */
export interface WidgetCaller {
  kind: 'widget';
  session: SessionRecord;
  /** The token's hash (hex): what its open push streams are counted by, never the token itself. */
  tokenHash: string;
}
