// biome-ignore lint/suspicious/noExplicitAny: answers are asserted field by field.
type Json = any;

/**
 * A guest shopper over HTTP with its own cookies: the Store API checkout the Blocks checkout uses, then the
 * classic order-pay page and the plugin's REST routes, as `build/classic.js` calls them.
 */
export class Shopper {
  private readonly cookies = new Map<string, string>();
  private storeNonce = '';

  constructor(private readonly siteUrl: string) {}

  /** The shopper's cookies, to hand the same cart session to a browser. */
  cookieList(): Array<{ name: string; value: string; url: string }> {
    return [...this.cookies].map(([name, value]) => ({ name, value, url: this.siteUrl }));
  }

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const response = await fetch(new URL(path, this.siteUrl), {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = (pair ?? '').split('=');
      if (name) this.cookies.set(name.trim(), value.join('='));
    }
    const nonce = response.headers.get('nonce');
    if (nonce) this.storeNonce = nonce;
    return response;
  }

  async json(
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Json }> {
    const response = await this.request(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  /** Puts a product in the cart (Store API) and answers the cart, with the payment methods it offers. */
  async addToCart(productId: number, quantity = 1): Promise<Json> {
    await this.json('/wp-json/wc/store/v1/cart');
    const added = await this.json(
      '/wp-json/wc/store/v1/cart/add-item',
      { id: productId, quantity },
      { nonce: this.storeNonce },
    );
    if (added.status !== 201) throw new Error(`add-item: ${added.status} ${JSON.stringify(added.body)}`);
    return added.body;
  }

  /** Places an order through the Store API with the ServicePay gateway; the order is pending. */
  async placeOrder(
    productId: number,
    quantity = 1,
    email = 'guest@example.com',
  ): Promise<{ orderId: number; orderKey: string }> {
    await this.addToCart(productId, quantity);
    const placed = await this.checkout(email);
    if (placed.status !== 200) throw new Error(`checkout: ${placed.status} ${JSON.stringify(placed.body)}`);
    return { orderId: placed.body.order_id, orderKey: placed.body.order_key };
  }

  /** The Store API checkout of the cart with `paymentMethod`, as the Blocks checkout posts it; its raw answer. */
  checkout(email: string, paymentMethod = 'servicepay'): Promise<{ status: number; body: Json }> {
    const address = {
      first_name: 'Ada',
      last_name: 'Payer',
      address_1: '1 Main St',
      city: 'San Francisco',
      state: 'CA',
      postcode: '94110',
      country: 'US',
    };
    return this.json(
      '/wp-json/wc/store/v1/checkout',
      {
        billing_address: { ...address, email, phone: '5555555' },
        shipping_address: address,
        payment_method: paymentMethod,
      },
      { nonce: this.storeNonce },
    );
  }

  /** The classic order-pay page (the receipt page the classic checkout sends payers to) and its script data. */
  async orderPayPage(orderId: number, orderKey: string): Promise<{ html: string; data: Json }> {
    const html = await (await this.request(`/checkout/order-pay/${orderId}/?key=${orderKey}`)).text();
    const json = /var servicepayClassic = (\{.*?\});/.exec(html)?.[1];
    return { html, data: json ? JSON.parse(json) : undefined };
  }

  /** The plugin's REST routes, as the checkout scripts call them. */
  async servicepay(what: 'session' | 'confirm', orderId: number, key: string, nonce: string) {
    return this.json(`/wp-json/servicepay/v1/orders/${orderId}/${what}`, { key, nonce });
  }
}
