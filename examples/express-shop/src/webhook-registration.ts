import type { ServicePay, WebhookEndpoint } from '@servicepay/node';
import type { OrderBook } from './order-book.ts';

/** The events the shop acts on or records (a credit no session could take is refunded by ServicePay: logged). */
const EVENTS = [
  'session.successful',
  'session.mismatch',
  'session.expired',
  'session.cancelled',
  'session.credit_unapplied',
] as const;

const secretKey = (endpointId: string) => `webhook-secret:${endpointId}`;

/**
 * What {@link registerWebhookEndpoint} did, for the start-up log.
 *
 * @example
 * import type { WebhookRegistration } from './webhook-registration.ts';
 * const line = (r: WebhookRegistration) => `webhook endpoint ${r.endpointId} ${r.action}`;
 */
export interface WebhookRegistration {
  endpointId: string;
  secret: string;
  action: 'reused' | 'created' | 'secret-rolled';
}

/**
 * Makes sure the service has exactly one webhook endpoint for `url` and that the shop holds its signing
 * secret, so a restart neither piles up endpoints nor loses the secret:
 *
 * - an endpoint for `url` whose secret the shop kept is reused (and re-enabled if the service had disabled it);
 * - an endpoint for `url` whose secret the shop does not have gets a new secret (`rollSecret`);
 * - otherwise one is created. Other endpoints for the same `url` are deleted.
 *
 * The secret is kept in the shop's own database (owner-only file), never printed.
 *
 * @example
 * import { ServicePay } from '@servicepay/node';
 * import { OrderBook } from './order-book.ts';
 * import { registerWebhookEndpoint } from './webhook-registration.ts';
 * const servicepay = new ServicePay(process.env.SERVICEPAY_SECRET_KEY ?? '');
 * const { secret } = await registerWebhookEndpoint(servicepay, new OrderBook('data/shop.db'), 'http://127.0.0.1:3000/webhooks/servicepay');
 */
export async function registerWebhookEndpoint(
  servicepay: ServicePay,
  orders: OrderBook,
  url: string,
): Promise<WebhookRegistration> {
  const same: WebhookEndpoint[] = [];
  for await (const endpoint of servicepay.webhookEndpoints.list({ limit: 100 })) {
    if (endpoint.url === url) same.push(endpoint);
  }
  const known = same.find((endpoint) => orders.setting(secretKey(endpoint.id)) !== undefined);
  let registration: WebhookRegistration;
  if (known) {
    registration = {
      endpointId: known.id,
      secret: orders.setting(secretKey(known.id)) as string,
      action: 'reused',
    };
    if (!known.enabled || EVENTS.some((type) => !known.events.includes(type))) {
      await servicepay.webhookEndpoints.update(known.id, { enabled: true, events: [...EVENTS] });
    }
  } else if (same[0]) {
    const rolled = await servicepay.webhookEndpoints.rollSecret(same[0].id);
    registration = { endpointId: rolled.id, secret: rolled.secret, action: 'secret-rolled' };
    if (!rolled.enabled) await servicepay.webhookEndpoints.update(rolled.id, { enabled: true });
  } else {
    const created = await servicepay.webhookEndpoints.create({
      url,
      events: [...EVENTS],
      description: 'Example shop (examples/express-shop)',
    });
    registration = { endpointId: created.id, secret: created.secret, action: 'created' };
  }
  orders.setSetting(secretKey(registration.endpointId), registration.secret);
  for (const endpoint of same) {
    if (endpoint.id !== registration.endpointId) await servicepay.webhookEndpoints.delete(endpoint.id);
  }
  return registration;
}
