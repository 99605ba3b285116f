import ipaddr from 'ipaddr.js';

/**
 * The key a per-address limit counts an IP address by: an IPv4 address as itself (an IPv4-mapped IPv6 address,
 * `::ffff:10.0.0.1`, as the IPv4 address it carries), an IPv6 address by its /64, since one host commonly holds
 * a whole /64 and could otherwise take a fresh budget per address.
 *
 * @example
 * addressKeyOf('::ffff:127.0.0.1'); // '127.0.0.1'
 * addressKeyOf('2001:db8::1'); // '2001:db8:0:0::/64'
 */
export function addressKeyOf(ip: string): string {
  if (!ipaddr.IPv6.isValid(ip)) return ip;
  const v6 = ipaddr.IPv6.parse(ip);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}
