/**
 * The service, its widget hosts and a merchant site with the spec CSP, in a child process of the widget
 * latency bench, so the browser driver in the parent does not share an event loop with the server it measures.
 * Sends `{ baseUrl, shopUrl, blankUrl, testKey, bankSecret }` once listening; stops on disconnect.
 */
import { startCheckoutWorld } from '../../test/browser/support/checkout-world.ts';

const world = await startCheckoutWorld({
  config: { rateLimit: { perMinute: 1_000_000, widgetPerMinutePerAddress: 1_000_000 } },
});
world.site.file('/blank.html', 'text/html; charset=utf-8', '<!doctype html><title>blank</title>');
process.send?.({
  baseUrl: world.server.baseUrl,
  shopUrl: world.shopUrl(),
  blankUrl: `${world.site.url}/blank.html`,
  testKey: world.keys.test,
  bankSecret: world.server.service.config.bank.secret,
});
process.on('disconnect', () => {
  void world.close().then(() => process.exit(0));
});
