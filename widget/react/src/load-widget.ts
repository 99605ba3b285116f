import { reactTexts as texts } from '../../src/texts.ts';

/** What `widget.js` puts on `window` (see `@servicepay/widget`). */
export interface ServicePayGlobal {
  init(options: {
    clientSecret: string;
    onSuccess: (payment: PaymentResult) => void;
    onError: (error: { message: string }) => void;
    onCancel?: () => void;
  }): void;
  close(): void;
  readonly version: string;
}

/** `onSuccess`'s payload (spec §2). */
export interface PaymentResult {
  id: string;
  reference: string;
  status: string;
}

const loading = new Map<string, Promise<ServicePayGlobal>>();

const servicePay = (): ServicePayGlobal | undefined =>
  (window as unknown as { ServicePay?: ServicePayGlobal }).ServicePay;

/**
 * Loads `widget.js` once per page: resolves at once when `window.ServicePay` exists, reuses a `<script>` with
 * the same `src` already on the page (the merchant's own tag, say), and adds one otherwise. Browser only.
 *
 * @example
 * const ServicePay = await loadWidget('https://js.servicepay.example/latest/widget.js');
 */
export function loadWidget(src: string, integrity?: string): Promise<ServicePayGlobal> {
  const ready = servicePay();
  if (ready) return Promise.resolve(ready);
  const pending = loading.get(src);
  if (pending) return pending;
  const promise = new Promise<ServicePayGlobal>((resolve, reject) => {
    const settle = () => {
      const loaded = servicePay();
      if (loaded) resolve(loaded);
      else reject(new Error(texts.scriptDefinedNothing(src)));
    };
    const existing = [...document.querySelectorAll<HTMLScriptElement>('script[src]')].find(
      (script) => script.src === new URL(src, document.baseURI).href,
    );
    const script = existing ?? document.createElement('script');
    script.addEventListener('load', settle, { once: true });
    script.addEventListener(
      'error',
      () => {
        loading.delete(src);
        reject(new Error(texts.scriptFailed(src)));
      },
      { once: true },
    );
    if (!existing) {
      script.src = src;
      script.async = true;
      if (integrity) {
        script.integrity = integrity;
        script.crossOrigin = 'anonymous';
      }
      document.head.append(script);
    }
  });
  loading.set(src, promise);
  return promise;
}
