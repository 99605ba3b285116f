import { ASSETS_ROUTE } from './pages/assets.ts';
import { BANK_PAGE } from './pages/bank-page.ts';
import { ENDPOINT_PAGE } from './pages/endpoint-page.ts';
import { EVENTS_PAGE } from './pages/events-page.ts';
import { KEYS_PAGE } from './pages/keys-page.ts';
import { KYC_PAGE } from './pages/kyc-page.ts';
import { PAYMENT_LINKS_PAGE } from './pages/payment-links-page.ts';
import { REQUESTS_PAGE } from './pages/requests-page.ts';
import { SESSION_PAGE } from './pages/session-page.ts';
import { SESSIONS_PAGE } from './pages/sessions-page.ts';
import { SIGN_IN_PAGE } from './pages/sign-in-page.ts';
import { WEBHOOKS_PAGE } from './pages/webhooks-page.ts';

/**
 * Every page and form of the developer portal, each declared once in its page module (`pages/<page>-page.ts`)
 * as an operation like the API's: method, path, auth (`portalPublic`, `portalSignIn`, `portalSession`), query
 * and form schemas, answers and handler. `portalRoutes` mounts exactly these behind the checks of their auth,
 * and the OpenAPI document describes them from the same entries. To add a page, add its module's entries here
 * (reference-server's README, "Adding a portal page").
 *
 * @example
 * PORTAL_OPERATIONS.find((operation) => operation.operationId === 'portalRefund')?.form?.schema; // RefundFormSchema
 */
export const PORTAL_OPERATIONS = [
  ...ASSETS_ROUTE,
  ...SIGN_IN_PAGE,
  ...SESSIONS_PAGE,
  ...SESSION_PAGE,
  ...BANK_PAGE,
  ...KEYS_PAGE,
  ...PAYMENT_LINKS_PAGE,
  ...WEBHOOKS_PAGE,
  ...ENDPOINT_PAGE,
  ...EVENTS_PAGE,
  ...REQUESTS_PAGE,
  ...KYC_PAGE,
] as const;

/** The `operationId` of a portal page or form (`'portalRollKey'`, `'portalEndpoint'`, …). */
export type PortalOperationId = (typeof PORTAL_OPERATIONS)[number]['operationId'];
