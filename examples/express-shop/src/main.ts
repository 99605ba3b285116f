/**
 * Runs the example shop against a running ServicePay:
 *
 *   SERVICEPAY_SECRET_KEY=sk_test_… npm start -w examples/express-shop
 *
 * Settings (environment): SERVICEPAY_SECRET_KEY (required), SERVICEPAY_API_URL (http://127.0.0.1:4242),
 * SERVICEPAY_WIDGET_URL (the test widget host, http://127.0.0.1:4243), SERVICEPAY_WIDGET_SCRIPT and
 * SERVICEPAY_WIDGET_INTEGRITY (a pinned script and its SRI hash, instead of /latest), SHOP_PORT (3000),
 * SHOP_DB (data/shop.db), SHOP_PUBLIC_URL (where ServicePay reaches the shop).
 */
import { PortInUseError, startShop } from './shop.ts';

const env = process.env;
const secretKey = env.SERVICEPAY_SECRET_KEY;
if (!secretKey) {
  console.error(
    'Set SERVICEPAY_SECRET_KEY to your sk_test_ key (npm start at the repository root prints one).',
  );
  process.exit(2);
}
const port = Number(env.SHOP_PORT ?? 3000);
const widgetUrl = env.SERVICEPAY_WIDGET_URL ?? 'http://127.0.0.1:4243';

try {
  const shop = await startShop({
    secretKey,
    apiUrl: env.SERVICEPAY_API_URL ?? 'http://127.0.0.1:4242',
    widgetScriptUrl: env.SERVICEPAY_WIDGET_SCRIPT ?? `${widgetUrl}/latest/widget.js`,
    widgetIntegrity: env.SERVICEPAY_WIDGET_INTEGRITY,
    dbPath: env.SHOP_DB ?? 'data/shop.db',
    port,
    publicUrl: env.SHOP_PUBLIC_URL,
  });
  console.log(`Example shop on ${shop.url}`);
  const stop = () => {
    shop.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  if (error instanceof PortInUseError) {
    console.error(`Port ${error.port} is in use: set SHOP_PORT to another port.`);
  } else {
    console.error(`The shop could not start: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
}
