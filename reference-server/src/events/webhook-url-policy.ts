import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Environment } from '@servicepay/node/protocol';

/**
 * Where the service may send webhooks (SSRF defence). A webhook is a request the service makes on a merchant's
 * say-so, so a URL must not let a merchant reach the service's own network:
 *
 * - live: `https` only, and every address the host resolves to must be public;
 * - test: `http` or `https`, public addresses or loopback (a receiver on the developer's own machine);
 * - never: credentials in the URL, private ranges (RFC 1918), CGNAT, link-local (cloud metadata
 *   169.254.169.254), unspecified, multicast, reserved and documentation ranges, IPv6 ULA/link-local, and the
 *   IPv4-mapped/NAT64 forms of any of those.
 *
 * The address check runs at registration and again on every delivery, inside the connection's own DNS lookup
 * (see {@link guardedLookup}), so a name that re-resolves to a private address later (DNS rebinding) is refused
 * at the moment of connecting, on the very address that would be used.
 */
export type AddressVerdict = 'public' | 'loopback' | 'forbidden';

const forbidden = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::', 96], // IPv4-compatible (deprecated) forms
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4: embeds an IPv4 address we would otherwise have to unpack
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6');
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail allowed), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const octets = dotted[1].split('.').map(Number);
    const [a = 0, b = 0, c = 0, d = 0] = octets;
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  return groups.map((group) => Number.parseInt(group, 16));
}

/** The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`, `::ffff:7f00:1`) or NAT64 (`64:ff9b::…`) address. */
function embeddedIpv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  if (!groups) return undefined;
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  const mapped = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff;
  const nat64 = g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0;
  if (!mapped && !nat64) return undefined;
  return `${g6 >> 8}.${g6 & 255}.${g7 >> 8}.${g7 & 255}`;
}

/** Classifies one IP address (v4 or v6, without brackets). Anything that is not an IP address is forbidden. */
export function classifyAddress(address: string): AddressVerdict {
  const family = isIP(address);
  // Zone indexes (`fe80::1%eth0`) exist only for link-local addresses.
  if (family === 0 || address.includes('%')) return 'forbidden';
  if (family === 6) {
    const inner = embeddedIpv4(address);
    if (inner !== undefined) return classifyAddress(inner);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (loopback.check(address, type)) return 'loopback';
  if (forbidden.check(address, type)) return 'forbidden';
  return 'public';
}

/** Whether an address may receive webhooks of the environment. */
export function addressAllowed(address: string, environment: Environment): boolean {
  const verdict = classifyAddress(address);
  return verdict === 'public' || (verdict === 'loopback' && environment === 'test');
}

export type UrlProblem = { ok: true; url: URL } | { ok: false; message: string };

/** The URL's host without IPv6 brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** The checks that need no DNS: scheme, credentials, literal addresses. */
export function checkUrlStatically(raw: string, environment: Environment): UrlProblem {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(environment === 'test' && url.protocol === 'http:')) {
    return {
      ok: false,
      message: environment === 'live' ? 'live endpoints must use https' : 'must use http or https',
    };
  }
  if (url.username !== '' || url.password !== '') return { ok: false, message: 'must not carry credentials' };
  const host = hostOf(url);
  // WHATWG URL parsing already turned decimal, octal and hex IPv4 spellings into dotted quads.
  if (isIP(host) !== 0 && !addressAllowed(host, environment)) {
    return { ok: false, message: forbiddenMessage(environment) };
  }
  if (environment === 'live' && (host === 'localhost' || host.endsWith('.localhost'))) {
    return { ok: false, message: forbiddenMessage(environment) };
  }
  return { ok: true, url };
}

const forbiddenMessage = (environment: Environment) =>
  environment === 'live'
    ? 'live endpoints must resolve to public addresses only'
    : 'must resolve to public or loopback addresses only';

export type Resolver = (host: string) => Promise<string[]>;

/** Every address a host name resolves to (A and AAAA, as the system resolver answers). */
export const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => {
      if (error) reject(error);
      else resolve(addresses.map((entry) => entry.address));
    });
  });

/**
 * Registration-time check: the static rules, then every address the name resolves to now. A name that does not
 * resolve (yet) is accepted: nothing can be sent to it, and the delivery-time lookup checks it again.
 */
export async function checkWebhookUrl(
  raw: string,
  environment: Environment,
  resolve: Resolver = systemResolver,
): Promise<UrlProblem> {
  const checked = checkUrlStatically(raw, environment);
  if (!checked.ok) return checked;
  const host = hostOf(checked.url);
  if (isIP(host) !== 0) return checked;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return checked;
  }
  if (addresses.some((address) => !addressAllowed(address, environment))) {
    return { ok: false, message: forbiddenMessage(environment) };
  }
  return checked;
}

/** The error a refused connection fails with, so the attempt records why. */
export class ForbiddenAddressError extends Error {
  override readonly name = 'ForbiddenAddressError';
  readonly code = 'EFORBIDDENADDRESS';
}

/**
 * A `lookup` for `net.connect` (and undici's `connect` options) that resolves as usual, then refuses the
 * connection if any resolved address is not allowed for the environment. The socket connects only to an
 * address this function approved, so a rebinding DNS answer cannot slip between check and use.
 */
export function guardedLookup(environment: Environment): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find((entry) => !addressAllowed(entry.address, environment));
      if (refused || addresses.length === 0) {
        return callback(
          new ForbiddenAddressError(
            `${hostname} resolves to a forbidden address (${refused?.address ?? 'none'})`,
          ),
          '',
          0,
        );
      }
      if ((options as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: typeof addresses) => void)(null, addresses);
      } else {
        const first = addresses[0] as { address: string; family: number };
        callback(null, first.address, first.family);
      }
    });
  };
}
