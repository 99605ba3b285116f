/**
 * A browser's worth of state for the developer portal over plain HTTP: one cookie jar, and the last CSRF token
 * a page carried. Form posts carry the server's own `Origin`, as a browser posting a portal page does.
 *
 * @example
 * const client = new PortalClient(server.baseUrl);
 * await client.signIn(keys.test.secretKey);
 * await client.request('GET', '/portal/keys');
 * await client.request('POST', '/portal/keys/roll', { _csrf: client.token, environment: 'test', kind: 'secret', confirm: 'yes' });
 */
export class PortalClient {
  cookies = new Map<string, string>();
  token = '';

  constructor(private readonly baseUrl: string) {}

  async request(
    method: string,
    path: string,
    fields?: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(fields ? { 'content-type': 'application/x-www-form-urlencoded', origin: this.baseUrl } : {}),
        ...headers,
      },
      ...(fields ? { body: new URLSearchParams(fields).toString() } : {}),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, value] = (pair ?? '').split('=');
      if (!name) continue;
      if (value) this.cookies.set(name, value);
      else this.cookies.delete(name);
    }
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.token = token;
    return { status: response.status, headers: response.headers, text };
  }

  /** Opens the sign-in page (its form cookie and token), then posts the key. */
  async signIn(key: string) {
    await this.request('GET', '/portal/sign-in');
    return this.request('POST', '/portal/sign-in', { _csrf: this.token, secretKey: key });
  }
}
