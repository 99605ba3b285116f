import { lookup } from 'node:dns';
import { readFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { startDnsServer } from '../../../test/support/dns-server.ts';
import {
  addressAllowed,
  checkWebhookUrl,
  classifyAddress,
  DnsDeadlineError,
  dnsResolver,
  guardedLookup,
} from './webhook-url-policy.ts';

describe('address classification (SSRF table)', () => {
  test.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['10.0.0.1', 'forbidden'],
    ['172.16.0.1', 'forbidden'],
    ['172.31.255.255', 'forbidden'],
    ['192.168.1.10', 'forbidden'],
    ['100.64.0.1', 'forbidden'],
    ['169.254.169.254', 'forbidden'],
    ['::ffff:169.254.169.254', 'forbidden'],
    ['::ffff:a9fe:a9fe', 'forbidden'],
    ['64:ff9b::a9fe:a9fe', 'forbidden'],
    ['0.0.0.0', 'forbidden'],
    ['::', 'forbidden'],
    ['224.0.0.1', 'forbidden'],
    ['255.255.255.255', 'forbidden'],
    ['fd12:3456::1', 'forbidden'],
    ['fc00::1', 'forbidden'],
    ['fe80::1', 'forbidden'],
    ['fe80::1%eth0', 'forbidden'],
    ['ff02::1', 'forbidden'],
    ['not-an-ip', 'forbidden'],
    // Issue 8: the spellings the hand-written parser let through, and their relatives.
    ['::ffff:0:7f00:1', 'forbidden'], // IPv4-translated (RFC 6145) 127.0.0.1
    ['::ffff:0:808:808', 'forbidden'], // IPv4-translated, even of a public address
    ['64:ff9b:1::a9fe:a9fe', 'forbidden'], // local-use NAT64 (RFC 8215) of 169.254.169.254
    ['64:ff9b::808:808', 'forbidden'], // NAT64 of a public address: a translator on our network
    ['2002:7f00:1::', 'forbidden'], // 6to4 of 127.0.0.1
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'forbidden'], // Teredo
    ['::7f00:1', 'forbidden'], // IPv4-compatible (deprecated) 127.0.0.1
    ['::127.0.0.1', 'forbidden'],
    ['2001:db8::1', 'forbidden'], // documentation
    ['fec0::1', 'forbidden'], // site-local
    ['100::1', 'forbidden'], // discard
    ['198.18.0.1', 'forbidden'], // benchmarking
    ['192.0.0.8', 'forbidden'],
    ['0x7f.1', 'forbidden'], // not an address as a socket takes one
  ])('%s is %s', (address, verdict) => {
    expect(classifyAddress(address)).toBe(verdict);
  });

  test('loopback is for test endpoints only', () => {
    expect(addressAllowed('127.0.0.1', 'test')).toBe(true);
    expect(addressAllowed('127.0.0.1', 'live')).toBe(false);
    expect(addressAllowed('10.0.0.1', 'test')).toBe(false);
    expect(addressAllowed('93.184.215.14', 'live')).toBe(true);
  });
});

const resolvesTo =
  (...addresses: string[]) =>
  async () =>
    addresses;

describe('URL rules', () => {
  test.each([
    ['live', 'http://93.184.215.14/hooks', false],
    ['live', 'https://93.184.215.14/hooks', true],
    ['live', 'https://127.0.0.1/hooks', false],
    ['live', 'https://[::1]/hooks', false],
    ['live', 'https://[::ffff:127.0.0.1]/hooks', false],
    ['live', 'https://2130706433/hooks', false], // 127.0.0.1 spelled as a number
    ['live', 'https://0x7f.1/hooks', false],
    ['live', 'https://169.254.169.254/latest/meta-data', false],
    ['live', 'https://localhost/hooks', false],
    ['live', 'https://user:pass@93.184.215.14/hooks', false],
    ['live', 'ftp://93.184.215.14/hooks', false],
    ['test', 'http://127.0.0.1:3000/hooks', true],
    ['test', 'http://[::1]:3000/hooks', true],
    ['test', 'http://10.0.0.5/hooks', false],
    ['test', 'http://169.254.169.254/', false],
    // Issue 8: the four spellings accepted at registration before.
    ['live', 'https://[::ffff:0:7f00:1]/', false],
    ['live', 'https://[64:ff9b:1::a9fe:a9fe]/', false],
    ['live', 'https://LOCALHOST./', false],
    ['live', 'https://localhost./hooks', false],
    ['live', 'https://api.localhost/hooks', false],
    ['live', 'https://Api.LocalHost../hooks', false],
    ['live', 'https://127.0.0.1./hooks', false],
    ['live', 'https://[::ffff:7f00:1]/', false],
    ['live', 'https://[2002:a9fe:a9fe::]/', false],
    ['live', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', false],
    ['test', 'http://[::ffff:0:7f00:1]:3000/', false],
    ['test', 'http://[64:ff9b::7f00:1]:3000/', false],
    ['test', 'http://LOCALHOST.:3000/hooks', true],
    ['live', 'https://[2606:4700:4700::1111]/hooks', true],
  ] as const)('%s %s → allowed %s', async (environment, url, allowed) => {
    const checked = await checkWebhookUrl(url, environment, resolvesTo('93.184.215.14'));
    expect(checked.ok).toBe(allowed);
  });

  test('a name is checked on every address it resolves to', async () => {
    expect(
      (await checkWebhookUrl('https://shop.example/hooks', 'live', resolvesTo('93.184.215.14'))).ok,
    ).toBe(true);
    const mixed = await checkWebhookUrl(
      'https://shop.example/hooks',
      'live',
      resolvesTo('93.184.215.14', '10.0.0.7'),
    );
    expect(mixed.ok).toBe(false);
    const metadata = await checkWebhookUrl('https://shop.example/', 'live', resolvesTo('169.254.169.254'));
    expect(metadata.ok).toBe(false);
    const mapped = await checkWebhookUrl('https://shop.example/', 'live', resolvesTo('::ffff:10.0.0.1'));
    expect(mapped.ok).toBe(false);
    const local = await checkWebhookUrl('http://dev.example/', 'test', resolvesTo('127.0.0.1'));
    expect(local.ok).toBe(true);
  });

  test('a name that does not resolve yet is accepted: the delivery-time lookup checks it again', async () => {
    const checked = await checkWebhookUrl('https://not-yet.example/', 'live', async () => {
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    });
    expect(checked.ok).toBe(true);
  });
});

describe('the registration-time lookup (c-ares, with a deadline)', () => {
  test('asks the name server for A and AAAA; a name it does not know resolves to nothing', async () => {
    const dns = await startDnsServer({
      records: { 'shop.example': ['93.184.215.14', '2606:4700:4700::1111'] },
    });
    try {
      const resolve = dnsResolver({ servers: [dns.address], deadlineMs: 1_000 });
      expect((await resolve('shop.example')).sort()).toEqual(['2606:4700:4700::1111', '93.184.215.14']);
      expect(await resolve('unknown.example')).toEqual([]);
    } finally {
      await dns.close();
    }
  });

  test('a name server that never answers: DnsDeadlineError, the URL refused, and file I/O never waits on it', async () => {
    const dns = await startDnsServer({ silent: true });
    try {
      const resolve = dnsResolver({ servers: [dns.address], deadlineMs: 1_500 });
      let settled = 0;
      // More pending lookups than libuv has threads: with dns.lookup they would hold every one of them.
      const lookups = [1, 2, 3, 4, 5, 6].map((n) =>
        resolve(`silent-${n}.example`).then(
          () => 'resolved',
          (error: unknown) => {
            settled += 1;
            return error;
          },
        ),
      );
      await Promise.all([1, 2, 3, 4, 5, 6].map(() => readFile(new URL(import.meta.url))));
      expect(settled).toBe(0);
      for (const outcome of await Promise.all(lookups)) expect(outcome).toBeInstanceOf(DnsDeadlineError);
      const checked = await checkWebhookUrl('https://silent.example/hooks', 'live', resolve);
      expect(checked).toEqual({ ok: false, message: expect.stringContaining('no answer from DNS in time') });
    } finally {
      await dns.close();
    }
  });
});

describe('the delivery-time lookup (DNS rebinding)', () => {
  const run = (environment: 'test' | 'live', host: string, all: boolean) =>
    new Promise<{ error: Error | null; address: unknown }>((resolve) => {
      guardedLookup(environment)(host, { all }, (error, address) => resolve({ error, address }));
    });

  test('refuses to connect a live endpoint to what resolves to loopback', async () => {
    const refused = await run('live', 'localhost', false);
    expect((refused.error as { code?: string } | null)?.code).toBe('EFORBIDDENADDRESS');
  });

  test('lets a test endpoint connect to loopback, in both lookup shapes', async () => {
    const expected = await new Promise<string>((resolve, reject) =>
      lookup('localhost', (error, address) => (error ? reject(error) : resolve(address))),
    );
    const single = await run('test', 'localhost', false);
    expect(single.error).toBeNull();
    expect(classifyAddress(String(single.address))).toBe('loopback');
    const all = await run('test', 'localhost', true);
    expect(all.error).toBeNull();
    expect((all.address as Array<{ address: string }>).map((entry) => entry.address)).toContain(expected);
  });
});
