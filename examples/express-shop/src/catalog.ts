/**
 * The shop's name: its pages' heading, and the name of the business `npm start` makes for it, which the checkout
 * shows the payer ("Pay Paper & Ink"), so the shop and its checkout agree.
 *
 * @example
 * import { SHOP_NAME } from './catalog.ts';
 * document.title = `${SHOP_NAME}: example shop`;
 */
export const SHOP_NAME = 'Paper & Ink';

/**
 * One thing the shop sells. Prices are integers in the currency's minor unit (kobo), as ServicePay expects.
 *
 * @example
 * import type { Product } from './catalog.ts';
 * const pen: Product = { id: 'pen', name: 'Pen', amount: 1_250_000, currency: 'NGN' };
 */
export interface Product {
  id: string;
  name: string;
  amount: number;
  currency: string;
}

/**
 * What the shop sells. The price is decided here, on the server: the browser sends only a product id, so it
 * can never change what the payer is charged.
 *
 * @example
 * import { findProduct } from './catalog.ts';
 * findProduct('notebook')?.amount; // 500000 (₦5,000.00)
 */
export const CATALOG: readonly Product[] = [
  { id: 'notebook', name: 'Linen notebook', amount: 500_000, currency: 'NGN' },
  { id: 'pen', name: 'Brass fountain pen', amount: 1_250_000, currency: 'NGN' },
];

/**
 * The product with this id (whatever the browser sent), or undefined.
 *
 * @example
 * import { findProduct } from './catalog.ts';
 * findProduct('diamond'); // undefined: answer 400
 */
export function findProduct(id: unknown): Product | undefined {
  return CATALOG.find((product) => product.id === id);
}
