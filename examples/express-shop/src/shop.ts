import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  constructEvent,
  InvalidRequestError,
  ServicePay,
  ServicePayError,
  type Session,
} from '@servicepay/node';
import express, { type NextFunction, type Request, type Response } from 'express';
import { CATALOG, findProduct } from './catalog.ts';
import { OrderBook } from './order-book.ts';
import { registerWebhookEndpoint } from './webhook-registration.ts';

/**
 * How to run the shop.
 *
 * @example
 * import type { ShopOptions } from '@servicepay/example-express-shop';
 * const options: ShopOptions = {
 *   secretKey: 'sk_test_…',
 *   apiUrl: 'http://127.0.0.1:4242',
 *   widgetScriptUrl: 'http://127.0.0.1:4243/latest/widget.js',
 *   dbPath: 'data/shop.db',
 *   port: 3000,
 * };
 */
export interface ShopOptions {
  /** The shop's ServicePay secret key (`sk_test_…`): server side only. */
  secretKey: string;
  /** The ServicePay API, e.g. `http://127.0.0.1:4242`. */
  apiUrl: string;
  /** The widget script for the key's environment, e.g. `http://127.0.0.1:4243/latest/widget.js`. */
  widgetScriptUrl: string;
  /** The SRI hash of a pinned widget script (`sha384-…`); leave out for `latest`. */
  widgetIntegrity?: string | undefined;
  /** The shop's SQLite file (orders, webhook events, the webhook signing secret). */
  dbPath: string;
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Where ServicePay reaches the shop; default `http://<host>:<port>`. */
  publicUrl?: string | undefined;
  /** The pages to serve; default this shop's `public/`. An `index.html` with `{{WIDGET_SCRIPT}}` gets the tag. */
  publicDir?: string;
  /** One line per thing worth telling the person running the shop. */
  log?: (line: string) => void;
}

/**
 * A running shop.
 *
 * @example
 * import { startShop, type Shop, type ShopOptions } from '@servicepay/example-express-shop';
 * const run = async (options: ShopOptions) => {
 *   const shop: Shop = await startShop(options);
 *   await shop.close();
 * };
 */
export interface Shop {
  url: string;
  webhookUrl: string;
  webhookEndpointId: string;
  orders: OrderBook;
  close(): Promise<void>;
}

/**
 * The port is taken: the caller says which setting to change, in one line.
 *
 * @example
 * import { PortInUseError } from '@servicepay/example-express-shop';
 * const line = (error: unknown) =>
 *   error instanceof PortInUseError ? `Port ${error.port} is in use: set SHOP_PORT to another port.` : String(error);
 */
export class PortInUseError extends Error {
  constructor(readonly port: number) {
    super(`port ${port} is in use`);
  }
}

const OWN_PUBLIC = fileURLToPath(new URL('../public/', import.meta.url));
const WEBHOOK_PATH = '/webhooks/servicepay';

/** Errors express's body parsers raise for what the client sent carry a 4xx `status`. */
const isClientError = (error: unknown): boolean => {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
};

const escapeAttribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The Content-Security-Policy of spec §4, for the widget host and API of the key's environment: scripts and
 * frames from the shop and the widget host, connections to the shop and the API. No `unsafe-inline`.
 *
 * @example
 * import { checkoutCsp } from '@servicepay/example-express-shop';
 * checkoutCsp('http://127.0.0.1:4243/latest/widget.js', 'http://127.0.0.1:4242');
 * // "script-src 'self' http://127.0.0.1:4243; connect-src 'self' http://127.0.0.1:4242; frame-src 'self' http://127.0.0.1:4243"
 */
export function checkoutCsp(widgetScriptUrl: string, apiUrl: string): string {
  const widget = new URL(widgetScriptUrl).origin;
  const api = new URL(apiUrl).origin;
  return `script-src 'self' ${widget}; connect-src 'self' ${api}; frame-src 'self' ${widget}`;
}

/**
 * Starts the example shop: the checkout page (the widget by one script tag, under the spec's CSP), the order
 * API it calls, and the webhook handler that settles orders exactly once. Registers its webhook endpoint with
 * ServicePay (one per URL, reused across restarts) and keeps the signing secret in its database.
 *
 * @example
 * import { startShop } from '@servicepay/example-express-shop';
 * const shop = await startShop({
 *   secretKey: process.env.SERVICEPAY_SECRET_KEY ?? '',
 *   apiUrl: 'http://127.0.0.1:4242',
 *   widgetScriptUrl: 'http://127.0.0.1:4243/latest/widget.js',
 *   dbPath: 'data/shop.db',
 *   port: 3000,
 * });
 * console.log(`open ${shop.url}`);
 */
export async function startShop(options: ShopOptions): Promise<Shop> {
  const log = options.log ?? ((line: string) => console.log(line));
  const host = options.host ?? '127.0.0.1';
  const servicepay = new ServicePay(options.secretKey, { baseUrl: options.apiUrl });
  const orders = new OrderBook(options.dbPath);
  const publicDir = options.publicDir ?? OWN_PUBLIC;
  const csp = checkoutCsp(options.widgetScriptUrl, options.apiUrl);
  const integrity = options.widgetIntegrity
    ? ` integrity="${escapeAttribute(options.widgetIntegrity)}" crossorigin="anonymous"`
    : '';
  const scriptTag = `<script src="${escapeAttribute(options.widgetScriptUrl)}"${integrity}></script>`;
  const indexHtml = readFileSync(`${publicDir}/index.html`, 'utf8').replace('{{WIDGET_SCRIPT}}', scriptTag);
  let webhookSecret: string | undefined;

  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', csp);
    next();
  });

  // The webhook route reads the raw body and comes before any JSON parser: the signature covers the bytes.
  app.post(WEBHOOK_PATH, express.raw({ type: () => true, limit: '256kb' }), (req, res) => {
    if (webhookSecret === undefined) {
      res.status(503).json({ error: 'starting' }); // ServicePay retries
      return;
    }
    let event: ReturnType<typeof constructEvent>;
    try {
      event = constructEvent(
        Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
        req.headers['x-service-signature'],
        webhookSecret,
      );
    } catch (error) {
      if (error instanceof ServicePayError) {
        log(`webhook refused: ${error.code}`);
        res.status(400).json({ error: error.code });
        return;
      }
      throw error;
    }
    // Events of a type this SDK version does not know arrive too (the service grows): record, answer 2xx.
    let session: Session | undefined;
    switch (event.type) {
      case 'session.successful':
      case 'session.mismatch':
      case 'session.expired':
      case 'session.cancelled':
      case 'session.credit_unapplied':
        session = event.data.session;
    }
    const first = orders.recordEvent({
      id: event.id,
      type: String(event.type),
      sessionId: session?.id ?? null,
    });
    if (session && event.type === 'session.successful') {
      const outcome = orders.settle(session, 'webhook');
      if (outcome === 'settled') log(`order ${session.reference} paid (webhook ${event.id})`);
      else if (outcome === 'amount_mismatch' || outcome === 'session_mismatch')
        log(`order ${session.reference} NOT paid: ${outcome} (webhook ${event.id})`);
    } else if (first) {
      log(`order ${session?.reference ?? '-'}: ${String(event.type)} (webhook ${event.id})`);
    }
    res.status(200).json({ received: true, duplicate: !first });
  });

  app.use('/api', express.json({ limit: '16kb' }));

  app.get('/api/products', (_req, res) => {
    res.json({ products: CATALOG });
  });

  // What a frontend that loads the widget itself (the React shop) needs: the environment and the widget host.
  app.get('/api/config', (_req, res) => {
    res.json({
      mode: servicepay.environment === 'live' ? 'LIVE' : 'TEST',
      widgetHost: new URL(options.widgetScriptUrl).origin,
      widgetScriptUrl: options.widgetScriptUrl,
    });
  });

  app.post('/api/orders', async (req, res) => {
    const product = findProduct(req.body?.productId);
    const name = typeof req.body?.name === 'string' ? req.body.name.trim() : '';
    const email = typeof req.body?.email === 'string' ? req.body.email.trim() : '';
    if (!product) {
      res.status(400).json({ error: 'Choose a product.' });
      return;
    }
    if (name === '' || email === '') {
      res.status(400).json({ error: 'Enter your name and email.' });
      return;
    }
    const order = orders.create(product);
    // The order id is the session's reference, and the idempotency key: a retried create pays one session.
    const session = await servicepay.sessions.create(
      {
        amount: product.amount,
        currency: product.currency,
        payer: { name, email },
        reference: order.id,
        metadata: { productId: product.id },
      },
      { idempotencyKey: order.id },
    );
    orders.attachSession(order.id, session.id);
    res.status(201).json({
      orderId: order.id,
      clientSecret: session.clientSecret,
      amount: product.amount,
      currency: product.currency,
    });
  });

  app.get('/api/orders/:id', async (req, res) => {
    let order = orders.get(req.params.id);
    if (!order) {
      res.status(404).json({ error: 'No such order.' });
      return;
    }
    // The payer is back from the widget: if no webhook has settled the order yet, ask the service, so a
    // late or lost webhook never leaves a paid order pending. settle() is the same exactly-once path.
    if (order.status === 'pending' && order.sessionId !== null) {
      try {
        const session = await servicepay.sessions.retrieve(order.sessionId);
        if (orders.settle(session, 'confirmation') === 'settled')
          log(`order ${order.id} paid (confirmation)`);
        order = orders.get(order.id) ?? order;
      } catch (error) {
        if (!(error instanceof ServicePayError)) throw error;
      }
    }
    res.json({
      id: order.id,
      status: order.status,
      amount: order.amount,
      currency: order.currency,
      paidAt: order.paidAt,
    });
  });

  app.get(['/', '/index.html'], (_req, res) => {
    res.type('html').send(indexHtml);
  });
  app.use(express.static(publicDir, { index: false }));

  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof InvalidRequestError) {
      res.status(400).json({ error: error.message });
    } else if (error instanceof ServicePayError) {
      log(`ServicePay answered ${error.statusCode ?? 'nothing'} ${error.code} (request ${error.requestId})`);
      res.status(502).json({ error: 'The payment service is not available. Try again in a moment.' });
    } else if (isClientError(error)) {
      res.status(400).json({ error: 'Bad request.' }); // malformed JSON, a body over the limit
    } else {
      console.error(error);
      res.status(500).json({ error: 'Something went wrong.' });
    }
  });

  const server: Server = app.listen(options.port, host);
  try {
    await once(server, 'listening');
  } catch (error) {
    orders.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(options.port);
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${host}:${port}`;
  const webhookUrl = `${options.publicUrl ?? url}${WEBHOOK_PATH}`;
  let registration: Awaited<ReturnType<typeof registerWebhookEndpoint>>;
  try {
    registration = await registerWebhookEndpoint(servicepay, orders, webhookUrl);
  } catch (error) {
    server.close();
    orders.close();
    throw error;
  }
  webhookSecret = registration.secret;
  log(`webhook endpoint ${registration.endpointId} ${registration.action} for ${webhookUrl}`);

  return {
    url,
    webhookUrl,
    webhookEndpointId: registration.endpointId,
    orders,
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
      await servicepay.close();
      orders.close();
    },
  };
}
