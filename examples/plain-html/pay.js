// Ask our server for a session (it fixes the amount), then open the widget with the client secret.
const button = document.getElementById('pay');
const status = document.getElementById('status');

async function waitUntilPaid(reference) {
  for (let attempt = 0; attempt < 60; attempt++) {
    const order = await (await fetch(`/orders/${encodeURIComponent(reference)}`)).json();
    if (order.status === 'paid') {
      status.textContent = `Paid. Your ticket reference is ${reference}.`;
      status.dataset.status = 'paid';
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

button.addEventListener('click', async () => {
  const response = await fetch('/session', { method: 'POST' });
  const { clientSecret, reference, error } = await response.json();
  if (!response.ok) {
    status.textContent = error;
    return;
  }
  status.dataset.reference = reference;
  window.ServicePay.init({
    clientSecret,
    onSuccess: () => {
      status.textContent = 'Payment received. Confirming…';
      void waitUntilPaid(reference);
    },
    onError: ({ message }) => {
      status.textContent = `Payment failed: ${message}`;
    },
    onCancel: () => {
      status.textContent = 'Cancelled: nothing was charged.';
    },
  });
});
