/**
 * `@servicepay/node/webhooks`: webhook verification on Web Crypto alone, for edge runtimes (Vercel Edge,
 * Cloudflare Workers, Deno) and anything else without `node:crypto` or `Buffer`. Loading it touches nothing of
 * Node's; the errors are the same classes as the main entry's.
 *
 * @example
 * import { constructEventAsync, SignatureVerificationError } from '@servicepay/node/webhooks';
 * export async function POST(req: Request) {
 *   try {
 *     const event = await constructEventAsync(await req.text(), req.headers.get('x-service-signature'), process.env.SERVICEPAY_WEBHOOK_SECRET ?? '');
 *     if (event.type === 'session.successful') console.log('paid', event.data.session.reference);
 *     return new Response(null, { status: 204 });
 *   } catch (error) {
 *     if (error instanceof SignatureVerificationError) return new Response(error.code, { status: 400 });
 *     throw error;
 *   }
 * }
 */
export { constructEventAsync, verifySignatureAsync } from './construct-event-async.ts';
export {
  type ClientErrorCode,
  ServicePayError,
  type ServicePayErrorCode,
  SignatureVerificationError,
  WebhookPayloadError,
} from './errors.ts';
export {
  type ConstructEventOptions,
  DEFAULT_TOLERANCE_SECONDS,
  type RawBody,
  SIGNATURE_HEADER,
  type SignatureHeader,
} from './internal/signature.ts';
export type {
  KnownWebhookEvent,
  Session,
  UnappliedCredit,
  UnknownEventType,
  UnknownWebhookEvent,
  WebhookEvent,
} from './responses.ts';
