/**
 * A React shop for the browser tests, bundled by esbuild and served from the merchant's origin (the spec CSP
 * allows no inline script). Rendered under StrictMode; `window.reactShop.open(secret)` mounts the
 * PaymentWidget, `unmount()` removes it; every callback lands in `window.merchantLog`.
 */
import { createElement, StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { PaymentWidget } from '../../../widget/react/src/index.ts';

type Log = Array<{ callback: string; payload?: unknown }>;
const log: Log = [];
const shop = window as unknown as {
  merchantLog: Log;
  reactShop: { open(secret: string): void; unmount(): void };
};
shop.merchantLog = log;
const widgetHost = document.querySelector('meta[name="widget-host"]')?.getAttribute('content') ?? '';

function Shop() {
  const [secret, setSecret] = useState<string | undefined>(undefined);
  shop.reactShop = { open: setSecret, unmount: () => setSecret(undefined) };
  return createElement(
    'main',
    null,
    createElement('h1', null, 'React shop'),
    secret
      ? createElement(PaymentWidget, {
          mode: 'TEST',
          clientSecret: secret,
          widgetHost,
          onSuccess: (payload) => log.push({ callback: 'onSuccess', payload }),
          onError: (payload) => log.push({ callback: 'onError', payload }),
          onCancel: () => log.push({ callback: 'onCancel' }),
        })
      : null,
  );
}

const container = document.getElementById('root');
if (container) createRoot(container).render(createElement(StrictMode, null, createElement(Shop)));
