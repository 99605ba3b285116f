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
