import { createSocket } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';

/** A name server on loopback (UDP) for tests, and what it was asked. */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for `dns.Resolver#setServers` (the service's `webhooks.dnsServers`). */
  address: string;
  /** The questions it read, as `name TYPE` (`shop.example A`). */
  questions: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

/** The name of the question starting at byte 12 of a query, and where the question's type begins. */
function readQuestion(query: Buffer): { name: string; typeAt: number } {
  const labels: string[] = [];
  let at = 12;
  while (at < query.length && query[at] !== 0) {
    const length = query[at] ?? 0;
    labels.push(query.subarray(at + 1, at + 1 + length).toString('latin1'));
    at += 1 + length;
  }
  return { name: labels.join('.').toLowerCase(), typeAt: at + 1 };
}

function addressBytes(address: string): Buffer {
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  const [head = '', tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = [...groups(head), ...Array(missing).fill('0'), ...groups(tail)];
  return Buffer.concat(all.map((group) => Buffer.from(group.padStart(4, '0'), 'hex')));
}

/**
 * A real DNS server on a loopback UDP port, speaking just enough of RFC 1035 for a resolver: it answers A and
 * AAAA questions for the names in `records` (one record per address, TTL 60), NXDOMAIN for any other name,
 * and, with `silent`, reads every query and answers none (a name server that never answers).
 *
 * @example
 * const dns = await startDnsServer({ records: { 'shop.example': ['93.184.215.14'] } });
 * await startServer({ webhooks: { dnsServers: [dns.address] } });
 * await dns.close();
 */
export async function startDnsServer(
  options: { records?: Record<string, string[]>; silent?: boolean } = {},
): Promise<TestDnsServer> {
  const socket = createSocket('udp4');
  const questions: string[] = [];
  socket.on('message', (query, peer) => {
    if (query.length < 12) return;
    const { name, typeAt } = readQuestion(query);
    const type = query.readUInt16BE(typeAt);
    questions.push(`${name} ${type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : type}`);
    if (options.silent) return;
    const known = options.records?.[name];
    const addresses = (known ?? []).filter((address) =>
      type === TYPE_A ? isIPv4(address) : type === TYPE_AAAA ? isIPv6(address) : false,
    );
    const question = query.subarray(12, typeAt + 4);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the query's id
    // QR, the query's opcode and RD, RA; RCODE 3 (NXDOMAIN) for a name it does not know.
    header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x7900) | 0x0080 | (known ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const answers = addresses.map((address) => {
      const data = addressBytes(address);
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(type, 2);
      record.writeUInt16BE(1, 4); // class IN
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, question, ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
