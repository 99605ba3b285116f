import { useEffect, useRef } from 'react';
import { loadWidget, type PaymentResult, type ServicePayGlobal } from './load-widget.ts';

/** `TEST` loads the test widget host (`{dev_cdn_url}`), `LIVE` the production one (`{cdn_url}`). */
export type PaymentWidgetMode = 'TEST' | 'LIVE';

/**
 * Where each mode's `widget.js` lives by default: the reference server's widget hosts (`npm start`). A
 * deployment passes its own with the `widgetHost` prop.
 */
export const DEFAULT_WIDGET_HOSTS: Readonly<Record<PaymentWidgetMode, string>> = {
  TEST: 'http://127.0.0.1:4243',
  LIVE: 'http://127.0.0.1:4244',
};

export interface PaymentWidgetProps {
  mode: PaymentWidgetMode;
  /** `cs_test_…` (mode TEST) or `cs_live_…` (mode LIVE), fresh from your backend. */
  clientSecret: string;
  onSuccess: (payment: PaymentResult) => void;
  onError: (error: { message: string }) => void;
  onCancel?: () => void;
  /** Base URL of the widget host for `mode` (default: `DEFAULT_WIDGET_HOSTS[mode]`). */
  widgetHost?: string;
  /** A pinned version (`0.1.0` loads `/v0.1.0/widget.js`); `latest` by default. */
  version?: string;
  /** The pinned script's SRI hash (`/v<version>/widget.js.sri`); needs `version`. */
  integrity?: string;
}

/** One checkout per client secret, shared by the mounts of one StrictMode double render. */
interface Opening {
  clientSecret: string;
  callbacks: { current: PaymentWidgetProps };
  /** The deferred close of an unmount: StrictMode's remount clears it; anything else runs it. */
  closeTimer: ReturnType<typeof setTimeout> | undefined;
  /** Set by a real unmount: a script still loading then opens nothing. */
  unmounted: boolean;
  servicePay: ServicePayGlobal | undefined;
}

const openings = new Map<string, Opening>();

/** Is this secret's overlay still on the page? It stays up to 3 s after a success or a cancel. */
const overlayShown = (clientSecret: string): boolean =>
  [...document.querySelectorAll('servicepay-checkout')].some(
    (element) => element.getAttribute('client-secret') === clientSecret,
  );

/**
 * A real unmount: closes what this opening showed (whatever screen it is on; never another secret's overlay)
 * and forgets it, so a later mount with the same secret opens the checkout again.
 */
function closeOpening(opening: Opening): void {
  clearTimeout(opening.closeTimer);
  opening.closeTimer = undefined;
  opening.unmounted = true;
  if (openings.get(opening.clientSecret) === opening) openings.delete(opening.clientSecret);
  if (opening.servicePay && overlayShown(opening.clientSecret)) opening.servicePay.close();
}

/**
 * The ServicePay checkout for React. Renders nothing itself: it loads `widget.js` from the host for `mode`
 * (once per page, reusing a tag already there), opens the overlay once per `clientSecret` (StrictMode's
 * mount–unmount–mount included), and closes it on unmount. Safe to render on a server: no `window` is
 * touched outside effects.
 *
 * @example
 * <PaymentWidget
 *   mode="TEST"
 *   clientSecret={clientSecret}
 *   onSuccess={({ reference }) => navigate(`/thanks/${reference}`)}
 *   onCancel={() => setPaying(false)}
 *   onError={({ message }) => setProblem(message)}
 * />
 */
export function PaymentWidget(props: PaymentWidgetProps): null {
  const callbacks = useRef(props);
  callbacks.current = props;
  const host = (props.widgetHost ?? DEFAULT_WIDGET_HOSTS[props.mode]).replace(/\/+$/, '');
  const src = `${host}/${props.version ? `v${props.version}` : 'latest'}/widget.js`;
  const { clientSecret, integrity } = props;

  useEffect(() => {
    let opening = openings.get(clientSecret);
    if (opening) {
      // StrictMode's second mount (or a re-render with a new host): the checkout is already open.
      clearTimeout(opening.closeTimer);
      opening.closeTimer = undefined;
      opening.callbacks = callbacks;
    } else {
      const created: Opening = {
        clientSecret,
        callbacks,
        closeTimer: undefined,
        unmounted: false,
        servicePay: undefined,
      };
      opening = created;
      openings.set(clientSecret, created);
      loadWidget(src, integrity).then(
        (servicePay) => {
          if (created.unmounted) return;
          created.servicePay = servicePay;
          // A new secret replacing an open one: the old one's deferred close would run after this init, which
          // widget.js would refuse ("already open"). Close it now.
          for (const other of [...openings.values()]) {
            if (other !== created && other.closeTimer !== undefined) closeOpening(other);
          }
          servicePay.init({
            clientSecret,
            onSuccess: (payment) => created.callbacks.current.onSuccess(payment),
            onError: (error) => created.callbacks.current.onError(error),
            onCancel: () => created.callbacks.current.onCancel?.(),
          });
        },
        (error: unknown) => {
          if (!created.unmounted) {
            created.callbacks.current.onError({
              message: error instanceof Error ? error.message : String(error),
            });
          }
        },
      );
    }
    const current = opening;
    return () => {
      // Deferred: StrictMode remounts at once and takes the checkout over; a real unmount closes it.
      current.closeTimer = setTimeout(() => closeOpening(current), 0);
    };
  }, [clientSecret, src, integrity]);

  return null;
}
