import ipaddr from 'ipaddr.js';

/** Names express accepts for whole address ranges (`proxy-addr`): loopback, link-local, unique-local. */
const PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** A `SERVICEPAY_TRUST_PROXY` / `--trust-proxy` value that is not a list of addresses, ranges or presets. */
export class TrustedProxiesError extends Error {
  override readonly name = 'TrustedProxiesError';
}

/**
 * Reads the reverse proxies whose `X-Forwarded-For` the service believes: a comma-separated list of IP
 * addresses, CIDR ranges (`10.0.0.0/8`), or the presets `loopback`, `linklocal`, `uniquelocal`; empty: none
 * (the socket's peer is the client). The per-address limits then count by the address the nearest
 * untrusted hop gave (express `trust proxy` with exactly this list).
 *
 * Deliberately not accepted: `true`, `*` or a hop count. They would believe an address any client can write
 * into the header itself, and a client could then take a fresh per-address budget with every request.
 *
 * @example
 * parseTrustedProxies('10.0.0.0/8, loopback'); // ['10.0.0.0/8', 'loopback']
 * parseTrustedProxies('true'); // throws TrustedProxiesError
 */
export function parseTrustedProxies(value: string | undefined): string[] {
  if (value === undefined) return [];
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (PRESETS.has(entry) || isAddress(entry) || isRange(entry)) continue;
    throw new TrustedProxiesError(
      `trusted proxy "${entry}" is not an IP address, a CIDR range (10.0.0.0/8) or one of loopback, linklocal, uniquelocal`,
    );
  }
  return entries;
}

/** Written out in full: `ipaddr.isValid` also takes `2` (0.0.0.2), which reads like a hop count. */
function isAddress(entry: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(entry) || ipaddr.IPv6.isValid(entry);
}

function isRange(entry: string): boolean {
  const [address, bits, ...rest] = entry.split('/');
  if (address === undefined || bits === undefined || rest.length > 0 || !isAddress(address)) return false;
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/** The ranges behind each preset, as express (`proxy-addr`) reads them. */
const PRESET_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An address as IPv4 when it is one (an IPv4-mapped IPv6 address included), else as IPv6; undefined if none. */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address()
    : parsed;
}

/**
 * Whether a socket's peer is one of the trusted proxies `entries` lists (as `parseTrustedProxies` returns them):
 * the same addresses, ranges and presets express believes `X-Forwarded-For` from. For what trusts a peer before
 * express sees the request: the per-address connection cap, which a load balancer (one peer carrying every
 * client) is exempt from.
 *
 * @example
 * const trusted = trustedProxyMatcher(['10.0.0.0/8', 'loopback']);
 * trusted('::ffff:10.1.2.3'); // true
 */
export function trustedProxyMatcher(entries: readonly string[]): (address: string) => boolean {
  const ranges: Range[] = entries
    .flatMap((entry) => PRESET_RANGES[entry] ?? [entry])
    .map((entry) => {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const address = parseAddress(entry) as ipaddr.IPv4 | ipaddr.IPv6;
      return [address, address.kind() === 'ipv4' ? 32 : 128] as Range;
    })
    .map(([address, bits]): Range => {
      // A range written as IPv4-mapped IPv6 (::ffff:10.0.0.0/104) matches the IPv4 addresses it holds.
      if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96)
        return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
      return [address, bits];
    });
  if (ranges.length === 0) return () => false;
  return (address) => {
    const parsed = parseAddress(address);
    if (!parsed) return false;
    return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  };
}
