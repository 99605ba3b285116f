/**
 * The smallest ServicePay merchant: one HTML page sent with the spec's Content-Security-Policy, a route that
 * creates the session (the amount is fixed here, never by the browser), and a webhook receiver that verifies
 * the signature on the raw body before it reads anything. No framework, no build step.
 *
 *   SERVICEPAY_SECRET_KEY=sk_test_... npm start -w examples/plain-html
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constructEvent, ServicePay, ServicePayError, SignatureVerificationError } from '@servicepay/node';

const env = process.env;
const apiUrl = env.SERVICEPAY_API_URL ?? 'http://127.0.0.1:4242';
const widgetUrl = env.SERVICEPAY_WIDGET_URL ?? 'http://127.0.0.1:4243';
const port = Number(env.PORT ?? 3002);
if (!env.SERVICEPAY_SECRET_KEY) {
  console.error(
    'Set SERVICEPAY_SECRET_KEY to your sk_test_ key (npm start at the repository root prints one).',
  );
  process.exit(2);
}
const servicepay = new ServicePay(env.SERVICEPAY_SECRET_KEY, { baseUrl: apiUrl });
const TICKET = { amount: 250_000, currency: 'NGN' }; // ₦2,500.00 in kobo

// Spec §4: scripts and frames from this page and the widget host; connections to this page and the API.
const widgetOrigin = new URL(widgetUrl).origin;
const CSP = `script-src 'self' ${widgetOrigin}; connect-src 'self' ${new URL(apiUrl).origin}; frame-src 'self' ${widgetOrigin}`;
const page = readFileSync(new URL('./index.html', import.meta.url), 'utf8').replace(
  'http://127.0.0.1:4243',
  widgetOrigin,
);
const script = readFileSync(new URL('./pay.js', import.meta.url), 'utf8');

/** Orders by reference; in memory to stay small (see the Express shop for SQLite). */
const orders = new Map<string, { status: 'pending' | 'paid'; deliveries: number }>();
let webhookSecret = '';

const send = (res: ServerResponse, status: number, type: string, body: string) => {
  res.writeHead(status, { 'content-type': type, 'content-security-policy': CSP }).end(body);
};
const json = (res: ServerResponse, status: number, body: unknown) =>
  send(res, status, 'application/json', JSON.stringify(body));

const rawBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const server = createServer(async (req, res) => {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  try {
    if (req.method === 'GET' && path === '/') return send(res, 200, 'text/html; charset=utf-8', page);
    if (req.method === 'GET' && path === '/pay.js') return send(res, 200, 'text/javascript', script);
    if (req.method === 'POST' && path === '/session') {
      const reference = `ticket-${randomUUID()}`;
      const session = await servicepay.sessions.create({
        ...TICKET,
        payer: { name: 'Concert goer', email: 'payer@example.com' },
        reference,
      });
      orders.set(reference, { status: 'pending', deliveries: 0 });
      return json(res, 201, { clientSecret: session.clientSecret, reference });
    }
    if (req.method === 'GET' && path.startsWith('/orders/')) {
      const order = orders.get(decodeURIComponent(path.slice('/orders/'.length)));
      return order ? json(res, 200, order) : json(res, 404, { error: 'no such order' });
    }
    if (req.method === 'POST' && path === '/webhooks/servicepay') {
      // The signature covers the exact bytes: verify them before parsing anything.
      const event = constructEvent(await rawBody(req), req.headers['x-service-signature'], webhookSecret);
      if (event.type !== 'session.successful') return json(res, 200, { received: true });
      const { reference, amount, currency, status } = event.data.session;
      const order = orders.get(reference);
      if (order) order.deliveries += 1;
      // Paid once: only a pending order, only a successful session, only the exact amount and currency.
      if (
        order?.status === 'pending' &&
        status === 'successful' &&
        amount === TICKET.amount &&
        currency === TICKET.currency
      ) {
        order.status = 'paid';
        console.log(`ticket ${reference} paid (webhook ${event.id})`);
      }
      return json(res, 200, { received: true });
    }
    json(res, 404, { error: 'not found' });
  } catch (error) {
    if (error instanceof SignatureVerificationError) return json(res, 400, { error: error.code });
    if (error instanceof ServicePayError) return json(res, 502, { error: error.code });
    console.error(error);
    json(res, 500, { error: 'internal error' });
  }
});

server.once('error', (error: NodeJS.ErrnoException) => {
  console.error(
    error.code === 'EADDRINUSE' ? `Port ${port} is in use: set PORT to another port.` : error.message,
  );
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
  registerWebhook().catch((error: unknown) => {
    console.error(
      `Could not register the webhook endpoint: ${error instanceof Error ? error.message : error}`,
    );
    process.exit(1);
  });
});

async function registerWebhook(): Promise<void> {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // One webhook endpoint for this URL: replace any left from an earlier run (its secret died with it).
  const webhookUrl = `${url}/webhooks/servicepay`;
  for await (const endpoint of servicepay.webhookEndpoints.list()) {
    if (endpoint.url === webhookUrl) await servicepay.webhookEndpoints.delete(endpoint.id);
  }
  webhookSecret = (await servicepay.webhookEndpoints.create({ url: webhookUrl })).secret;
  console.log(`Plain HTML example on ${url}`);
}

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
