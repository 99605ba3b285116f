/**
 * The React shop's backend: the Express shop's (orders in SQLite, sessions with the SDK, the signed webhook
 * that settles exactly once), serving the Vite build in `dist/` instead of the plain page.
 *
 *   SERVICEPAY_SECRET_KEY=sk_test_… npm start -w examples/react-shop
 *
 * Settings as the Express shop's; the defaults differ so both can run at once: SHOP_PORT 3001,
 * SHOP_DB data/react-shop.db.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PortInUseError, startShop } from '@servicepay/example-express-shop';

const env = process.env;
const dist = fileURLToPath(new URL('../dist/', import.meta.url));
if (!existsSync(`${dist}index.html`)) {
  console.error('No build in dist/: run `npm start -w examples/react-shop` (it builds first).');
  process.exit(2);
}
if (!env.SERVICEPAY_SECRET_KEY) {
  console.error(
    'Set SERVICEPAY_SECRET_KEY to your sk_test_ key (npm start at the repository root prints one).',
  );
  process.exit(2);
}
const port = Number(env.SHOP_PORT ?? 3001);
const widgetUrl = env.SERVICEPAY_WIDGET_URL ?? 'http://127.0.0.1:4243';

try {
  const shop = await startShop({
    secretKey: env.SERVICEPAY_SECRET_KEY,
    apiUrl: env.SERVICEPAY_API_URL ?? 'http://127.0.0.1:4242',
    widgetScriptUrl: env.SERVICEPAY_WIDGET_SCRIPT ?? `${widgetUrl}/latest/widget.js`,
    dbPath: env.SHOP_DB ?? 'data/react-shop.db',
    port,
    publicUrl: env.SHOP_PUBLIC_URL,
    publicDir: dist,
  });
  console.log(`React shop on ${shop.url}`);
  const stop = () => {
    shop.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  console.error(
    error instanceof PortInUseError
      ? `Port ${error.port} is in use: set SHOP_PORT to another port.`
      : `The shop could not start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
}
