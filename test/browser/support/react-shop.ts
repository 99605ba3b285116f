/**
 * A React shop for the browser tests, bundled by esbuild and served from the merchant's origin (the spec CSP
 * allows no inline script). Rendered under StrictMode; `window.reactShop.open(secret)` mounts the
 * PaymentWidget (or gives the mounted one a new secret), `unmount()` removes it; every callback lands in
 * `window.merchantLog`. Both apply at once (`flushSync`), so a test can check the page right after them.
 */
import { createElement, StrictMode, useState } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { PaymentWidget } from '../../../widget/react/src/index.ts';

type Log = Array<{ callback: string; payload?: unknown }>;
interface Mounted {
  secret: string;
  /** A pinned version of widget.js (`/v<version>/widget.js`); `latest` without one. */
  version?: string;
}
const log: Log = [];
const shop = window as unknown as {
  merchantLog: Log;
  reactShop: { open(secret: string, version?: string): void; unmount(): void };
};
shop.merchantLog = log;
const widgetHost = document.querySelector('meta[name="widget-host"]')?.getAttribute('content') ?? '';

function Shop() {
  const [mounted, setMounted] = useState<Mounted | undefined>(undefined);
  shop.reactShop = {
    open: (secret, version) => flushSync(() => setMounted(version ? { secret, version } : { secret })),
    unmount: () => flushSync(() => setMounted(undefined)),
  };
  return createElement(
    'main',
    null,
    createElement('h1', null, 'React shop'),
    mounted
      ? createElement(PaymentWidget, {
          mode: 'TEST',
          clientSecret: mounted.secret,
          widgetHost,
          ...(mounted.version ? { version: mounted.version } : {}),
          onSuccess: (payload) => log.push({ callback: 'onSuccess', payload }),
          onError: (payload) => log.push({ callback: 'onError', payload }),
          onCancel: () => log.push({ callback: 'onCancel' }),
        })
      : null,
  );
}

const container = document.getElementById('root');
if (container) createRoot(container).render(createElement(StrictMode, null, createElement(Shop)));
