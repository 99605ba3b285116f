import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
// The look is the Express shop's own stylesheet: both examples sell the same things.
import '@servicepay/example-express-shop/shop.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
// StrictMode runs effects twice in development: <PaymentWidget> opens the checkout once per client secret anyway.
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
