/**
 * Who may use a portal route, and so which checks run before its handler (`portalRoutes` adds them from this,
 * never a handler itself):
 *
 * - `public`: anyone. The stylesheet and script, the entry redirect, the sign-in page. Reads no environment's data.
 * - `sign-in`: the sign-in form. Same origin, url-encoded, and the double-submit token of the sign-in cookie
 *   (checked by its handler, which then checks the key).
 * - `session`: a signed-in page (`GET`) or form (`POST`: same origin, url-encoded, the session's CSRF token).
 *   Every one is held to the session's environment, the environment of the key that signed in: a request naming
 *   another environment is refused before its handler runs, and the handler reads and changes that environment
 *   only.
 */
export type PortalAccess = 'public' | 'sign-in' | 'session';

/**
 * The portal's pages: each is one module, `pages/<page>-page.ts`, that owns its `GET` and its form posts (their
 * handlers, `<page>PageRoutes`, and the rendering they answer with). `assets` is the stylesheet and script,
 * served by `portalRoutes` itself.
 */
export type PortalPage =
  | 'assets'
  | 'sign-in'
  | 'sessions'
  | 'session'
  | 'bank'
  | 'keys'
  | 'webhooks'
  | 'endpoint'
  | 'events'
  | 'requests'
  | 'kyc';

/**
 * One route of the portal: its method, its path under `/portal` (express syntax), who may use it, and the page
 * module whose handler answers it.
 */
export interface PortalRoute {
  method: 'get' | 'post';
  path: string;
  access: PortalAccess;
  page: PortalPage;
}

/**
 * Every route the portal answers, by name. `portalRoutes` mounts exactly these (one handler each, typed so
 * that a route without a handler, or a handler without a route, does not compile), and the tests walk them all,
 * so a page added here is held to the session's environment and checked without anyone remembering to.
 *
 * @example
 * for (const [name, route] of Object.entries(PORTAL_ROUTES)) console.log(name, route.method, `/portal${route.path}`);
 */
export const PORTAL_ROUTES = {
  asset: { method: 'get', path: '/assets/:name', access: 'public', page: 'assets' },
  home: { method: 'get', path: '/', access: 'public', page: 'sign-in' },
  signInPage: { method: 'get', path: '/sign-in', access: 'public', page: 'sign-in' },
  signIn: { method: 'post', path: '/sign-in', access: 'sign-in', page: 'sign-in' },
  signOut: { method: 'post', path: '/sign-out', access: 'session', page: 'sign-in' },
  keys: { method: 'get', path: '/keys', access: 'session', page: 'keys' },
  rollKey: { method: 'post', path: '/keys/roll', access: 'session', page: 'keys' },
  webhooks: { method: 'get', path: '/webhooks', access: 'session', page: 'webhooks' },
  createEndpoint: { method: 'post', path: '/webhooks', access: 'session', page: 'webhooks' },
  endpoint: { method: 'get', path: '/webhooks/:id', access: 'session', page: 'endpoint' },
  revealSecret: { method: 'post', path: '/webhooks/:id/reveal', access: 'session', page: 'endpoint' },
  endpointState: { method: 'post', path: '/webhooks/:id/state', access: 'session', page: 'endpoint' },
  deleteEndpoint: { method: 'post', path: '/webhooks/:id/delete', access: 'session', page: 'endpoint' },
  resend: { method: 'post', path: '/webhooks/:id/resend', access: 'session', page: 'endpoint' },
  events: { method: 'get', path: '/events', access: 'session', page: 'events' },
  event: { method: 'get', path: '/events/:id', access: 'session', page: 'events' },
  resendEvent: { method: 'post', path: '/events/:id/resend', access: 'session', page: 'events' },
  requests: { method: 'get', path: '/requests', access: 'session', page: 'requests' },
  request: { method: 'get', path: '/requests/:id', access: 'session', page: 'requests' },
  sessions: { method: 'get', path: '/sessions', access: 'session', page: 'sessions' },
  session: { method: 'get', path: '/sessions/:id', access: 'session', page: 'session' },
  bank: { method: 'get', path: '/bank', access: 'session', page: 'bank' },
  transfer: { method: 'post', path: '/bank/transfers', access: 'session', page: 'bank' },
  expire: { method: 'post', path: '/sessions/:id/expire', access: 'session', page: 'session' },
  refund: { method: 'post', path: '/sessions/:id/refunds', access: 'session', page: 'session' },
  kyc: { method: 'get', path: '/kyc', access: 'session', page: 'kyc' },
} as const satisfies Record<string, PortalRoute>;

/** The name of a portal route (`'rollKey'`, `'endpoint'`, …). */
export type PortalRouteName = keyof typeof PORTAL_ROUTES;
