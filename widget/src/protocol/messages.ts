/**
 * The typed protocol between the overlay on the merchant page (host) and the checkout page in the sandboxed
 * iframe (frame). The host puts a random nonce and its own origin in the frame's URL fragment. The frame's
 * script says hello (with the nonce) to exactly that origin; the host, having checked the message's origin
 * (the widget host), source (its iframe's window) and nonce, answers with one `window.postMessage` to the
 * frame's exact origin carrying a `MessageChannel` port. From then on both sides talk only over that port,
 * which nothing else on the page holds. Every message is checked by shape on arrival; anything else is ignored.
 *
 * @example
 * const message = parseFrameMessage(event.data);
 * if (message?.type === 'success') onSuccess(message.payment);
 */

/** Bumped when a message changes shape; the frame refuses a host that speaks another version. */
export const PROTOCOL_VERSION = 1;

/**
 * Frame → host, the frame's only window message: sent as soon as its script runs, to the parent's exact origin
 * (which the host put in the frame's URL fragment beside the nonce), so the host need not wait for `load`.
 */
export interface HelloMessage {
  kind: 'servicepay:hello';
  nonce: string;
}

/** The host's only window message, the answer to hello: host → frame, with `ports[0]` the frame's end of the channel. */
export interface ConnectMessage {
  kind: 'servicepay:connect';
  protocol: typeof PROTOCOL_VERSION;
  nonce: string;
}

/** What `onSuccess` receives (spec §2): exactly these three fields. */
export interface PaymentResult {
  id: string;
  reference: string;
  status: string;
}

/** Host → frame, over the port. */
export type HostMessage =
  /** Start the checkout with this client secret (sent once, after `ready`). */
  | { type: 'start'; clientSecret: string }
  /** The payer pressed the overlay's close control, or Escape outside the frame. */
  | { type: 'close-requested' };

/** Frame → host, over the port. */
export type FrameMessage =
  | { type: 'ready' }
  | { type: 'success'; payment: PaymentResult }
  | { type: 'cancelled' }
  | { type: 'error'; message: string }
  /** The payer is done (continue, back to the merchant, close on a final screen, or the 3 s redirect). */
  | { type: 'close' };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isString = (value: unknown, max = 2_000): value is string =>
  typeof value === 'string' && value.length <= max;

/** The hello message, or `undefined` for anything else. */
export function parseHelloMessage(data: unknown): HelloMessage | undefined {
  if (!isRecord(data) || data.kind !== 'servicepay:hello' || !isString(data.nonce, 100)) return undefined;
  return { kind: 'servicepay:hello', nonce: data.nonce };
}

/** The connect message, or `undefined` for anything else. */
export function parseConnectMessage(data: unknown): ConnectMessage | undefined {
  if (!isRecord(data) || data.kind !== 'servicepay:connect') return undefined;
  if (data.protocol !== PROTOCOL_VERSION || !isString(data.nonce, 100)) return undefined;
  return { kind: 'servicepay:connect', protocol: PROTOCOL_VERSION, nonce: data.nonce };
}

/** A host message, or `undefined` for anything that is not exactly one. */
export function parseHostMessage(data: unknown): HostMessage | undefined {
  if (!isRecord(data)) return undefined;
  switch (data.type) {
    case 'start':
      return isString(data.clientSecret, 300)
        ? { type: 'start', clientSecret: data.clientSecret }
        : undefined;
    case 'close-requested':
      return { type: 'close-requested' };
    default:
      return undefined;
  }
}

/** A frame message, or `undefined` for anything that is not exactly one. */
export function parseFrameMessage(data: unknown): FrameMessage | undefined {
  if (!isRecord(data)) return undefined;
  switch (data.type) {
    case 'success': {
      const payment = data.payment;
      if (!isRecord(payment)) return undefined;
      const { id, reference, status } = payment;
      if (!isString(id, 200) || !isString(reference, 200) || !isString(status, 50)) return undefined;
      return { type: 'success', payment: { id, reference, status } };
    }
    case 'error':
      return isString(data.message) ? { type: 'error', message: data.message } : undefined;
    case 'ready':
    case 'cancelled':
    case 'close':
      return { type: data.type };
    default:
      return undefined;
  }
}
