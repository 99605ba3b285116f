import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError } from '../support/api.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { PortalClient } from '../support/portal-client.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 24, "Webhook URLs are what they say": a URL is parsed by the WHATWG URL Standard and stored in its
// normalised form; control and bidirectional characters are refused with a field error, by the API (POST and
// PATCH) and the portal's form alike; and the registration-time DNS lookup asks a real name server on loopback
// with a deadline of its own, so one that never answers gets a clear 400 instead of holding the request.

let server: RunningServer;
let names: TestDnsServer;
let silent: TestDnsServer;
let shop: Awaited<ReturnType<RunningServer['createBusiness']>>;

beforeAll(async () => {
  names = await startDnsServer({
    records: {
      'shop.example': ['93.184.215.14', '2606:4700:4700::1111'],
      'intranet.example': ['10.0.0.7'],
    },
  });
  silent = await startDnsServer({ silent: true });
  server = await startServer({
    rateLimit: { perMinute: 10_000 },
    webhooks: { schedule: 'fast', dnsServers: [names.address], dnsDeadlineMs: 1_000 },
  });
  shop = await server.createBusiness({ name: 'Url Shop', kycApproved: true });
});

afterAll(async () => {
  await server?.close();
  await names?.close();
  await silent?.close();
});

const create = (url: string, key = shop.keys.test.secretKey) =>
  call(server.baseUrl, 'POST', '/api/webhooks', { token: key, json: { url } });

/** Control and bidirectional characters, each inside an otherwise good URL. */
const REFUSED = {
  NUL: 'http://127.0.0.1:5299/a\u0000b',
  'a tab': 'http://127.0.0.1:5299/a\tb',
  'a line feed': 'http://127.0.0.1:5299/a\nb',
  DEL: 'http://127.0.0.1:5299/a\u007fb',
  'C1 NEL': 'http://127.0.0.1:5299/a\u0085b',
  'U+061C': 'http://127.0.0.1:5299/a\u061cb',
  'U+200E': 'http://127.0.0.1:5299/a\u200eb',
  'U+200F': 'http://127.0.0.1:5299/a\u200fb',
  'U+202A': 'http://127.0.0.1:5299/a\u202ab',
  'U+202E': 'http://127.0.0.1:5299/\u202egpj.exe',
  'U+2066': 'http://127.0.0.1:5299/a\u2066b',
  'U+2069': 'http://127.0.0.1:5299/a\u2069b',
  'a bidi control in the host': 'http://shop\u202e.example/',
};

describe('a webhook URL is stored as the WHATWG URL parser writes it', () => {
  it('a space, markup and upper case are normalised, stored and answered that way', async () => {
    const cases = [
      ['http://127.0.0.1:5299/a b', 'http://127.0.0.1:5299/a%20b'],
      [
        'http://127.0.0.1:5299/<script>alert(1)</script>?q="x"',
        'http://127.0.0.1:5299/%3Cscript%3Ealert(1)%3C/script%3E?q=%22x%22',
      ],
      ['HTTP://127.0.0.1:5299', 'http://127.0.0.1:5299/'],
    ];
    for (const [sent, stored] of cases) {
      const created = await create(sent as string);
      expect(created.status, created.text).toBe(201);
      expect(created.body.data.url).toBe(stored);
      const read = await call(server.baseUrl, 'GET', `/api/webhooks/${created.body.data.id}`, {
        token: shop.keys.test.secretKey,
      });
      expect(read.body.data.url).toBe(stored);
      expect(read.text).not.toContain('<script>');
      // Found by the spelling it was sent in (how an app that registers itself at every start finds it).
      const found = await call(
        server.baseUrl,
        'GET',
        `/api/webhooks?url=${encodeURIComponent(sent as string)}`,
        { token: shop.keys.test.secretKey },
      );
      expect(found.body.data.map((endpoint: { id: string }) => endpoint.id)).toEqual([created.body.data.id]);
    }
  });

  it.each(Object.entries(REFUSED))(
    '%s is refused with a field error on url, and nothing is stored',
    async (_name, url) => {
      const before = await server.rows('SELECT id FROM webhook_endpoints');
      const refused = await create(url);
      const body = expectError(refused, 400, 'validation_failed');
      expect(body.errors?.map((entry) => entry.path)).toEqual(['url']);
      expect(await server.rows('SELECT id FROM webhook_endpoints')).toEqual(before);
    },
  );

  it('PATCH takes the same rule: a control character is refused, a space is normalised', async () => {
    const created = await create('http://127.0.0.1:5299/patched');
    const id = created.body.data.id as string;
    const patch = (url: string) =>
      call(server.baseUrl, 'PATCH', `/api/webhooks/${id}`, {
        token: shop.keys.test.secretKey,
        json: { url },
      });
    const refused = expectError(await patch('http://127.0.0.1:5299/\u202eevil'), 400, 'validation_failed');
    expect(refused.errors?.map((entry) => entry.path)).toEqual(['url']);
    expect((await patch('http://127.0.0.1:5299/new path')).body.data.url).toBe(
      'http://127.0.0.1:5299/new%20path',
    );
  });

  it("the portal's form takes the same rule, and says what is wrong", async () => {
    const client = new PortalClient(server.baseUrl);
    await client.signIn(shop.keys.test.secretKey);
    await client.request('GET', '/portal/webhooks');
    const before = await server.rows('SELECT id FROM webhook_endpoints');
    const refused = await client.request('POST', '/portal/webhooks', {
      _csrf: client.token,
      url: 'http://127.0.0.1:5299/\u202egpj.exe',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('bidirectional controls');
    expect(await server.rows('SELECT id FROM webhook_endpoints')).toEqual(before);
    const added = await client.request('POST', '/portal/webhooks', {
      _csrf: client.token,
      url: 'http://127.0.0.1:5299/from the portal',
    });
    expect(added.status).toBe(201);
    expect(added.text).toContain('http://127.0.0.1:5299/from%20the%20portal');
  });
});

describe('the registration-time DNS lookup', () => {
  it('asks the configured name server: a public answer is accepted, a private one refused', async () => {
    const accepted = await create('https://shop.example/hooks', shop.keys.live.secretKey);
    expect(accepted.status, accepted.text).toBe(201);
    const refused = expectError(
      await create('https://intranet.example/hooks', shop.keys.live.secretKey),
      400,
      'validation_failed',
    );
    expect(refused.errors?.map((entry) => entry.path)).toEqual(['url']);
    // A name that does not exist (yet) is accepted: the delivery-time lookup checks it again.
    expect((await create('https://not-yet.example/hooks', shop.keys.live.secretKey)).status).toBe(201);
    expect(names.questions).toEqual(
      expect.arrayContaining(['shop.example A', 'shop.example AAAA', 'intranet.example A']),
    );
  });

  it('a name server that never answers gets a 400 field error at the deadline, five registrations at once', async () => {
    const stalled = await startServer({
      webhooks: { schedule: 'fast', dnsServers: [silent.address], dnsDeadlineMs: 500 },
    });
    try {
      const key = (await stalled.createBusiness({ name: 'Stalled DNS Shop' })).keys.test.secretKey;
      const answers = await Promise.all(
        [1, 2, 3, 4, 5].map((n) =>
          call(stalled.baseUrl, 'POST', '/api/webhooks', {
            token: key,
            json: { url: `http://never-answers-${n}.example/hooks` },
          }),
        ),
      );
      for (const answer of answers) {
        const body = expectError(answer, 400, 'validation_failed');
        expect(body.errors?.map((entry) => entry.path)).toEqual(['url']);
      }
      // The server was asked (every name), and nothing was stored.
      for (const n of [1, 2, 3, 4, 5]) expect(silent.questions).toContain(`never-answers-${n}.example A`);
      expect(await stalled.rows('SELECT id FROM webhook_endpoints')).toEqual([]);
    } finally {
      await stalled.close();
    }
  });
});
