import { lookup as dnsLookup, promises as dnsPromises } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Environment } from '@servicepay/node/protocol';
import ipaddr from 'ipaddr.js';

/**
 * Where the service may send webhooks (SSRF defence). A webhook is a request the service makes on a merchant's
 * say-so, so a URL must not let a merchant reach the service's own network:
 *
 * - live: `https` only, and every address the host resolves to must be public unicast;
 * - test: `http` or `https`, public unicast addresses or loopback (a receiver on the developer's own machine);
 * - never: credentials in the URL, and every address `ipaddr.js` names a special range (private, CGNAT,
 *   link-local with the cloud metadata address, unspecified, broadcast, multicast, reserved, benchmarking,
 *   documentation, ULA, site-local, discard), and every IPv6 form that wraps or translates an IPv4 address on
 *   the way (IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96` and local-use `64:ff9b:1::/48`, 6to4,
 *   Teredo, IPv4-compatible `::a.b.c.d`), whatever IPv4 address they carry. IPv4-mapped `::ffff:a.b.c.d` is
 *   the one wrapped form judged by the address it carries: a dual-stack socket connects to exactly that IPv4.
 *
 * The address library is `ipaddr.js` and its range names, not a hand-written parser: spellings of IPv6 are
 * many, and a parser of our own is one more place to get one wrong.
 *
 * The address check runs at registration and again on every delivery, inside the connection's own DNS lookup
 * (see {@link guardedLookup}), so a name that re-resolves to a private address later (DNS rebinding) is refused
 * at the moment of connecting, on the very address that would be used.
 */
export type AddressVerdict = 'public' | 'loopback' | 'forbidden';

/** The deprecated IPv4-compatible block `::/96`, which ipaddr.js leaves as unicast. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/**
 * Classifies one IP address (v4 or v6, without brackets). Only `unicast` (the range name ipaddr.js gives an
 * address in no special range) is public, and loopback is reported as such; anything else, including text that
 * is not an IP address and link-local zone indexes (`fe80::1%eth0`), is forbidden.
 *
 * @example
 * classifyAddress('93.184.215.14'); // 'public'
 * classifyAddress('::ffff:7f00:1'); // 'loopback' (IPv4-mapped 127.0.0.1)
 * classifyAddress('64:ff9b:1::a9fe:a9fe'); // 'forbidden' (local-use NAT64)
 */
export function classifyAddress(address: string): AddressVerdict {
  // `isIP` is strict (no `0x7f.1`); ipaddr.js alone would accept more spellings than a socket does.
  const family = isIP(address);
  if (family === 0) return 'forbidden';
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.js reads any dotted tail as IPv4-mapped (`::127.0.0.1` becomes `::ffff:7f00:1`), while a socket
    // and `inet_ntop` mean IPv4-compatible by it; the URL parser writes the hex form first, and refuses zones.
    parsed = ipaddr.parse(family === 6 ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address);
  } catch {
    return 'forbidden';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.zoneId !== undefined) return 'forbidden';
    if (v6.range() === 'ipv4Mapped') return classifyAddress(v6.toIPv4Address().toString());
    if (v6.range() === 'unicast' && v6.match(IPV4_COMPATIBLE)) return 'forbidden';
  }
  const range = parsed.range();
  if (range === 'loopback') return 'loopback';
  return range === 'unicast' ? 'public' : 'forbidden';
}

/** Whether an address may receive webhooks of the environment. */
export function addressAllowed(address: string, environment: Environment): boolean {
  const verdict = classifyAddress(address);
  return verdict === 'public' || (verdict === 'loopback' && environment === 'test');
}

export type UrlProblem = { ok: true; url: URL } | { ok: false; message: string };

/**
 * The URL's host without IPv6 brackets, lower-case and without the trailing dot of a fully qualified name
 * (`LOCALHOST.` is `localhost`): the form every rule below compares.
 */
export const hostOf = (url: URL): string =>
  url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '')
    .toLowerCase();

/** Names that mean this machine whatever DNS says (RFC 6761): never a live receiver. */
const isLocalhostName = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost');

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
  if (environment === 'live' && isLocalhostName(host)) {
    return { ok: false, message: forbiddenMessage(environment) };
  }
  return { ok: true, url };
}

const forbiddenMessage = (environment: Environment) =>
  environment === 'live'
    ? 'live endpoints must resolve to public addresses only'
    : 'must resolve to public or loopback addresses only';

/**
 * Every address a host name resolves to now; throws `DnsDeadlineError` when DNS gave no answer in time, any other
 * error when the name does not resolve.
 */
export type Resolver = (host: string) => Promise<string[]>;

/** DNS did not answer the registration-time lookup before its deadline. */
export class DnsDeadlineError extends Error {
  override readonly name = 'DnsDeadlineError';
  readonly code = 'ETIMEOUT';
}

/** How the registration-time lookup asks DNS. */
export interface DnsOptions {
  /** Name servers (`address` or `address:port`); null: the system's, from `/etc/resolv.conf`. */
  servers: readonly string[] | null;
  /** The whole lookup's deadline, both address families together. */
  deadlineMs: number;
}

/** The resolver's own codes for "no answer": its timeout, and the cancel at our deadline. */
const NO_ANSWER = new Set(['ETIMEOUT', 'ECANCELLED']);

/**
 * The registration-time lookup: A and AAAA asked at once of DNS by c-ares (`dns.promises.Resolver`), each try
 * timing out, and the whole lookup cancelled at `deadlineMs`. *Why not `dns.lookup`:* it runs `getaddrinfo`
 * on libuv's thread pool (four threads, shared with file I/O), cannot be cancelled and waits as long as the
 * system resolver does (5 s a try): a few registrations of a name whose DNS never answers held every thread,
 * and the service's own file work waited behind them. c-ares asks on the event loop, and gives up on time.
 * A name with no records (`ENOTFOUND`, `ENODATA`) resolves to no address; a family that got no answer is left
 * out if the other answered; only when neither answered in time is it a `DnsDeadlineError`. The resolver reads
 * DNS only, not `/etc/hosts`; the delivery-time lookup (`guardedLookup`) is the system's, hosts file included,
 * and checks every address again at the moment of connecting.
 *
 * @example
 * const resolve = dnsResolver({ servers: null, deadlineMs: 2000 });
 * await resolve('shop.example'); // ['93.184.215.14']
 */
export function dnsResolver(options: DnsOptions): Resolver {
  return async (host) => {
    // One resolver per lookup: `cancel()` ends every query of a resolver, so it must not be shared.
    const resolver = new dnsPromises.Resolver({
      timeout: Math.max(1, Math.floor(options.deadlineMs / 2)),
      tries: 2,
    });
    if (options.servers) resolver.setServers([...options.servers]);
    const deadline = setTimeout(() => resolver.cancel(), options.deadlineMs);
    try {
      const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
      const addresses = answers.flatMap((answer) => (answer.status === 'fulfilled' ? answer.value : []));
      const unanswered = answers.filter(
        (answer) =>
          answer.status === 'rejected' && NO_ANSWER.has((answer.reason as { code?: string }).code ?? ''),
      );
      if (unanswered.length === answers.length) {
        throw new DnsDeadlineError(`DNS gave no answer for ${host} within ${options.deadlineMs} ms`);
      }
      return addresses;
    } finally {
      clearTimeout(deadline);
    }
  };
}

/**
 * Registration-time check: the static rules, then every address the name resolves to now. A name that does not
 * resolve (yet) is accepted: nothing can be sent to it, and the delivery-time lookup checks it again. A name
 * whose DNS gives no answer before the lookup's deadline is refused (see `dnsResolver`): the merchant can try
 * again, and the answer comes in seconds instead of holding the request.
 */
export async function checkWebhookUrl(
  raw: string,
  environment: Environment,
  resolve: Resolver,
): Promise<UrlProblem> {
  const checked = checkUrlStatically(raw, environment);
  if (!checked.ok) return checked;
  const host = hostOf(checked.url);
  if (isIP(host) !== 0) return checked;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    if (error instanceof DnsDeadlineError) {
      return {
        ok: false,
        message: `its host name ${host} got no answer from DNS in time; check the name and try again`,
      };
    }
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
