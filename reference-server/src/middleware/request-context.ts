import type { Response } from 'express';
import type { ApiCaller } from '../businesses/ownership.ts';
import type { WidgetCaller } from './widget-caller.ts';

/** Who an authenticated request is from: a business's API key, or the open checkout of one session. */
export type Caller = ApiCaller | WidgetCaller;

/**
 * What the middleware learns about a request on its way to the handler. It lives in express's `res.locals`
 * (the portal keeps its signed-in context beside it, through `portal-auth.ts`); this module is the only one
 * that reads or writes these fields, so their types are said once, here.
 */
interface RequestLocals {
  /** `req_…`, sent as `Request-Id` and in every error envelope (`request-id.ts`). */
  requestId?: string;
  /** When express first saw the request (`performance.now()`): the request log's duration counts from here. */
  receivedAt?: number;
  /** Set by authentication (`authenticate.ts`) once the credential is checked and its budget spent. */
  caller?: Caller | undefined;
  /** The error envelope sent, as text: what the request log keeps of a refused request. */
  errorBody?: string;
}

// The one place `res.locals` is given its type.
const locals = (res: Response): RequestLocals => res.locals as RequestLocals;

/**
 * Records what a middleware learnt about the request, for those after it.
 *
 * @example
 * setRequestContext(res, { caller }); // authenticate.ts, once the key is checked
 */
export function setRequestContext(res: Response, fields: RequestLocals): void {
  Object.assign(locals(res), fields);
}

/**
 * The request's id (`req_…`); undefined only before `requestId` ran (a fault in the first middleware).
 *
 * @example
 * logger.warn('database unavailable', { requestId: requestIdOf(res) });
 */
export const requestIdOf = (res: Response): string | undefined => locals(res).requestId;

/**
 * When express first saw the request (`performance.now()`), if `requestId` ran.
 *
 * @example
 * const durationMs = performance.now() - (receivedAtOf(res) ?? performance.now());
 */
export const receivedAtOf = (res: Response): number | undefined => locals(res).receivedAt;

/**
 * The error envelope this request was answered with, as sent (`sendErrorEnvelope` keeps it).
 *
 * @example
 * const errorBody = res.statusCode >= 400 ? errorBodyOf(res) : undefined;
 */
export const errorBodyOf = (res: Response): string | undefined => locals(res).errorBody;

/**
 * The authenticated caller, or undefined before authentication (or on a route without a credential).
 *
 * @example
 * const caller = callerOf(res);
 * if (caller?.kind === 'widget') return caller.session.id;
 */
export const callerOf = (res: Response): Caller | undefined => locals(res).caller;

/**
 * The API-key caller of a route that `requireApiKey` guards; throws if the route has none (a wiring fault).
 *
 * @example
 * sessions.retrieve(apiCaller(res), id);
 */
export function apiCaller(res: Response): ApiCaller {
  const caller = callerOf(res);
  if (caller === undefined || caller.kind === 'widget')
    throw new Error('no API key authenticated this request');
  return caller;
}

/**
 * The widget-token caller of a route that `requireWidgetToken` guards; throws if the route has none.
 *
 * @example
 * sessions.newAccount(widgetCaller(res).session.id);
 */
export function widgetCaller(res: Response): WidgetCaller {
  const caller = callerOf(res);
  if (caller?.kind !== 'widget') throw new Error('no widget token authenticated this request');
  return caller;
}
