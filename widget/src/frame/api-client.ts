import type { BootstrapResult, NewAccountResult, PublicSession } from '@servicepay/node/protocol';

/**
 * An answer of the service that was not 2xx, with its stable `code`.
 *
 * @example
 * if (error instanceof ApiError && error.code === 'session_not_active') showEnded();
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The service could not be reached (offline, DNS, connection reset, CORS refused).
 *
 * @example
 * if (error instanceof NetworkError) showConnectionProblem();
 */
export class NetworkError extends Error {
  constructor(cause: unknown) {
    super('network error', { cause });
    this.name = 'NetworkError';
  }
}

interface Envelope<T> {
  meta?: { statusCode?: number; message?: string; code?: string };
  data?: T;
}

/**
 * The checkout's calls to the service, made from the frame (the widget host's origin). Every call but the
 * bootstrap carries the widget token in `Authorization`; none carries a secret in the URL.
 *
 * @example
 * const api = new CheckoutApi('https://api.servicepay.example');
 * const { token, session, virtualAccount } = await api.bootstrap(clientSecret);
 */
export class CheckoutApi {
  /** Server clock minus local clock, from the last answer's `Date` header (0 until known). */
  clockOffsetMs = 0;

  constructor(readonly baseUrl: string) {}

  bootstrap(clientSecret: string): Promise<BootstrapResult> {
    return this.call<BootstrapResult>('POST', '/api/widget/bootstrap', undefined, { clientSecret });
  }

  newAccount(sessionId: string, token: string): Promise<NewAccountResult> {
    return this.call<NewAccountResult>(
      'POST',
      `/api/widget/sessions/${encodeURIComponent(sessionId)}/accounts`,
      token,
    );
  }

  /** The payer's cancel: the session in its public view, like every answer to a widget token. */
  cancel(sessionId: string, token: string): Promise<PublicSession> {
    return this.call<PublicSession>(
      'POST',
      `/api/widget/sessions/${encodeURIComponent(sessionId)}/cancel`,
      token,
    );
  }

  private async call<T>(method: string, path: string, token?: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    const sentAt = Date.now();
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        cache: 'no-store',
        credentials: 'omit',
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new NetworkError(error);
    }
    this.readClock(response, sentAt);
    let envelope: Envelope<T>;
    try {
      envelope = (await response.json()) as Envelope<T>;
    } catch (error) {
      if (response.ok) throw new NetworkError(error);
      throw new ApiError(response.status, 'unknown', response.statusText);
    }
    if (!response.ok || envelope.data === undefined) {
      throw new ApiError(response.status, envelope.meta?.code ?? 'unknown', envelope.meta?.message ?? '');
    }
    return envelope.data;
  }

  /** The countdown follows the service's clock, so a wrong clock on the payer's phone cannot shorten it. */
  private readClock(response: Response, sentAt: number): void {
    const date = response.headers.get('date');
    if (!date) return;
    const server = Date.parse(date);
    if (Number.isNaN(server)) return;
    // `Date` has whole seconds: only correct offsets clearly beyond that rounding and the round trip.
    const local = (sentAt + Date.now()) / 2;
    const offset = server + 500 - local;
    this.clockOffsetMs = Math.abs(offset) > 2_000 ? offset : 0;
  }
}
