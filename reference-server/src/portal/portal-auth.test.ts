import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../errors.ts';
import { assertCsrfToken, assertSameOrigin, csrfTokenFor, newCookieId, readCookies } from './portal-auth.ts';

/** Just enough of a request for the header checks. */
const request = (headers: Record<string, string>, protocol = 'http') =>
  ({
    protocol,
    headers,
    get: (name: string) => headers[name.toLowerCase()],
  }) as unknown as Request;

describe('portal auth helpers', () => {
  it('derives one CSRF token per cookie id, unguessable from another id', () => {
    const id = newCookieId();
    expect(id).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(csrfTokenFor(id)).toBe(csrfTokenFor(id));
    expect(csrfTokenFor(id)).not.toBe(csrfTokenFor(newCookieId()));
    expect(csrfTokenFor(id)).not.toContain(id);
    expect(() => assertCsrfToken(csrfTokenFor(id), csrfTokenFor(id))).not.toThrow();
    for (const sent of [undefined, '', 'x', ['a'], csrfTokenFor(newCookieId())]) {
      expect(() => assertCsrfToken(sent, csrfTokenFor(id))).toThrow(HttpError);
    }
  });

  it('accepts a post from its own origin (Origin, else Referer) and refuses any other or none', () => {
    const host = { host: '127.0.0.1:4242' };
    expect(() => assertSameOrigin(request({ ...host, origin: 'http://127.0.0.1:4242' }))).not.toThrow();
    expect(() =>
      assertSameOrigin(request({ ...host, referer: 'http://127.0.0.1:4242/portal/keys' })),
    ).not.toThrow();
    for (const headers of [
      { origin: 'http://127.0.0.1:4243' },
      { origin: 'null' },
      { origin: 'https://127.0.0.1:4242' },
      { referer: 'http://127.0.0.1:4242.evil.example/portal' },
      { origin: 'http://evil.example', referer: 'http://127.0.0.1:4242/portal/keys' },
      {},
    ]) {
      expect(() => assertSameOrigin(request({ ...host, ...headers })), JSON.stringify(headers)).toThrow(
        HttpError,
      );
    }
  });

  it('reads cookies by name, first value winning', () => {
    const cookies = readCookies(request({ cookie: 'a=1; sp_portal=abc; sp_portal=evil; =x; b' }));
    expect(cookies.get('sp_portal')).toBe('abc');
    expect(cookies.get('a')).toBe('1');
    expect(cookies.has('b')).toBe(false);
  });
});
