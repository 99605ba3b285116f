// The checkout page's script: ask the shop's backend for an order (the backend fixes the amount and creates the
// ServicePay session), open the widget with the session's client secret, then wait for the order to be paid.
// Plain JavaScript from the shop's own origin: the page's CSP allows no inline script.

const form = document.getElementById('checkout');
const productSelect = document.getElementById('product');
const payButton = document.getElementById('pay');
const statusLine = document.getElementById('status');
const orderLine = document.getElementById('order');
const orderId = document.getElementById('order-id');
const orderStatus = document.getElementById('order-status');

const formatter = (currency) => new Intl.NumberFormat('en-NG', { style: 'currency', currency });
const say = (text) => {
  statusLine.textContent = text;
};
const showOrder = (order) => {
  orderLine.hidden = false;
  orderId.textContent = order.id;
  orderStatus.textContent = order.status;
  orderStatus.dataset.status = order.status;
};

async function loadProducts() {
  const response = await fetch('/api/products');
  const { products } = await response.json();
  for (const product of products) {
    const option = document.createElement('option');
    option.value = product.id;
    option.textContent = `${product.name}: ${formatter(product.currency).format(product.amount / 100)}`;
    productSelect.append(option);
  }
}

async function waitUntilPaid(id) {
  for (let attempt = 0; attempt < 60; attempt++) {
    const response = await fetch(`/api/orders/${encodeURIComponent(id)}`);
    const order = await response.json();
    showOrder(order);
    if (order.status === 'paid') {
      say('Thank you: your order is paid.');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  say('Your payment is still being confirmed. This page will show it once it is; you can also refresh.');
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!window.ServicePay) {
    say('The checkout could not load. Is the ServicePay widget host running?');
    return;
  }
  payButton.disabled = true;
  say('Creating your order…');
  try {
    const response = await fetch('/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Object.fromEntries(new FormData(form))),
    });
    const body = await response.json();
    if (!response.ok) {
      say(body.error ?? 'The order could not be created.');
      return;
    }
    showOrder({ id: body.orderId, status: 'pending' });
    say('Pay by bank transfer in the window that opened.');
    window.ServicePay.init({
      clientSecret: body.clientSecret,
      onSuccess: () => {
        say('Payment received. Confirming your order…');
        void waitUntilPaid(body.orderId);
      },
      onError: ({ message }) => say(`The payment did not go through: ${message}`),
      onCancel: () => say('Payment cancelled. Nothing was charged.'),
    });
  } catch {
    say('The shop could not be reached. Try again.');
  } finally {
    payButton.disabled = false;
  }
});

void loadProducts();
