import { PaymentWidget } from '@servicepay/react';
import { type FormEvent, useEffect, useState } from 'react';

interface Product {
  id: string;
  name: string;
  amount: number;
  currency: string;
}

interface Checkout {
  orderId: string;
  clientSecret: string;
}

interface ShopConfig {
  mode: 'TEST' | 'LIVE';
  widgetHost: string;
}

type OrderStatus = 'pending' | 'paid';

const money = (amount: number, currency: string) =>
  new Intl.NumberFormat('en-NG', { style: 'currency', currency }).format(amount / 100);

async function json<T>(response: Response): Promise<T> {
  const body = (await response.json()) as T & { error?: string };
  if (!response.ok) throw new Error(body.error ?? `The shop answered ${response.status}.`);
  return body;
}

/**
 * The checkout: the shop's backend creates the order and its session (it decides the amount), the page renders
 * `<PaymentWidget>` with the session's client secret, and waits for the order to be paid (by the webhook).
 */
export function App() {
  const [config, setConfig] = useState<ShopConfig>();
  const [products, setProducts] = useState<Product[]>([]);
  const [productId, setProductId] = useState('notebook');
  const [checkout, setCheckout] = useState<Checkout>();
  const [status, setStatus] = useState('');
  const [order, setOrder] = useState<{ id: string; status: OrderStatus }>();

  useEffect(() => {
    void fetch('/api/config')
      .then(json<ShopConfig>)
      .then(setConfig);
    void fetch('/api/products')
      .then(json<{ products: Product[] }>)
      .then(({ products: list }) => setProducts(list));
  }, []);

  async function pay(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setStatus('Creating your order…');
    try {
      const created = await fetch('/api/orders', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ productId, name: 'Ada Lovelace', email: 'ada@example.com' }),
      }).then(json<Checkout>);
      setOrder({ id: created.orderId, status: 'pending' });
      setCheckout(created);
      setStatus('Pay by bank transfer in the window that opened.');
    } catch (error) {
      setStatus(error instanceof Error ? error.message : 'The order could not be created.');
    }
  }

  async function waitUntilPaid(orderId: string) {
    for (let attempt = 0; attempt < 60; attempt++) {
      const current = await fetch(`/api/orders/${encodeURIComponent(orderId)}`).then(
        json<{ id: string; status: OrderStatus }>,
      );
      setOrder(current);
      if (current.status === 'paid') {
        setStatus('Thank you: your order is paid.');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  return (
    <main>
      <h1>Paper &amp; Ink</h1>
      <p className="note">
        The React example shop, paying with ServicePay in test mode: no real money moves.
      </p>
      <form onSubmit={pay}>
        <label htmlFor="product">Product</label>
        <select id="product" value={productId} onChange={(event) => setProductId(event.target.value)}>
          {products.map((product) => (
            <option key={product.id} value={product.id}>
              {product.name}: {money(product.amount, product.currency)}
            </option>
          ))}
        </select>
        <button type="submit" disabled={!config || checkout !== undefined}>
          Pay by bank transfer
        </button>
      </form>
      <p id="status" role="status" aria-live="polite">
        {status}
      </p>
      {order && (
        <p id="order">
          Order <code id="order-id">{order.id}</code>:{' '}
          <strong id="order-status" data-status={order.status}>
            {order.status}
          </strong>
        </p>
      )}
      {config && checkout && (
        <PaymentWidget
          mode={config.mode}
          widgetHost={config.widgetHost}
          clientSecret={checkout.clientSecret}
          onSuccess={() => {
            setStatus('Payment received. Confirming your order…');
            void waitUntilPaid(checkout.orderId);
          }}
          onCancel={() => {
            setCheckout(undefined);
            setStatus('Payment cancelled. Nothing was charged.');
          }}
          onError={({ message }) => {
            setCheckout(undefined);
            setStatus(`The payment did not go through: ${message}`);
          }}
        />
      )}
    </main>
  );
}
