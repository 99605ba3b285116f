/** The example shop as a library, so `npm start` and the React shop's backend run the same code. */
export { CATALOG, findProduct, type Product, SHOP_NAME } from './catalog.ts';
export { type Order, OrderBook, type SettleOutcome } from './order-book.ts';
export { checkoutCsp, PortInUseError, type Shop, type ShopOptions, startShop } from './shop.ts';
export { registerWebhookEndpoint, type WebhookRegistration } from './webhook-registration.ts';
