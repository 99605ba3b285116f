import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { event } from '../test-support/fixtures.ts';
import { ServicePayError, SignatureVerificationError, WebhookPayloadError } from './errors.ts';
import {
  constructEvent,
  constructEventAsync,
  generateTestHeader,
  verifySignature,
  Webhooks,
} from './webhooks.ts';
import { constructEventAsync as edgeConstructEventAsync } from './webhooks-edge.ts';

const SECRET = 'whsec_current0000000000000000000000';
const OLD_SECRET = 'whsec_previous000000000000000000000';
const payload = JSON.stringify(event());
const now = () => Math.floor(Date.now() / 1000);
const sign = (secret: string, timestamp: number, body: string) =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

type Verify = (
  body: Parameters<typeof constructEvent>[0],
  header: Parameters<typeof constructEvent>[1],
  secret: Parameters<typeof constructEvent>[2],
  options?: Parameters<typeof constructEvent>[3],
) => Promise<unknown>;

const variants: [string, Verify][] = [
  ['constructEvent (node:crypto)', async (...args) => constructEvent(...args)],
  ['constructEventAsync (WebCrypto)', (...args) => constructEventAsync(...args)],
  ['constructEventAsync from @servicepay/node/webhooks', (...args) => edgeConstructEventAsync(...args)],
  ['client.webhooks.constructEvent', async (...args) => new Webhooks().constructEvent(...args)],
];

const codeOf = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServicePayError) return error.code;
    throw error;
  }
  throw new Error('expected verification to fail');
};

describe.each(variants)('%s', (_name, verify) => {
  it('returns the parsed event for a good signature', async () => {
    const header = generateTestHeader({ payload, secret: SECRET });
    await expect(verify(payload, header, SECRET)).resolves.toEqual(event());
  });

  it('accepts the raw body as a Buffer, a Uint8Array and an ArrayBuffer', async () => {
    const header = generateTestHeader({ payload, secret: SECRET });
    const buffer = Buffer.from(payload);
    const bytes = new TextEncoder().encode(payload);
    await expect(verify(buffer, header, SECRET)).resolves.toMatchObject({ id: 'evt_1' });
    await expect(verify(bytes, header, SECRET)).resolves.toMatchObject({ id: 'evt_1' });
    await expect(verify(bytes.buffer, header, SECRET)).resolves.toMatchObject({ id: 'evt_1' });
  });

  it('refuses a parsed object and says what to do instead', async () => {
    const header = generateTestHeader({ payload, secret: SECRET });
    const parsed = JSON.parse(payload) as never;
    await expect(codeOf(verify(parsed, header, SECRET))).resolves.toBe('webhook_payload_not_raw');
    await expect(verify(parsed, header, SECRET)).rejects.toBeInstanceOf(SignatureVerificationError);
    await expect(verify(parsed, header, SECRET)).rejects.toThrow(/express\.raw/);
  });

  it('refuses a body changed after signing', async () => {
    const header = generateTestHeader({ payload, secret: SECRET });
    const changed = payload.replace('500000', '500001');
    await expect(codeOf(verify(changed, header, SECRET))).resolves.toBe('webhook_signature_mismatch');
  });

  it('refuses another secret', async () => {
    const header = generateTestHeader({ payload, secret: OLD_SECRET });
    await expect(codeOf(verify(payload, header, SECRET))).resolves.toBe('webhook_signature_mismatch');
  });

  it('verifies during rotation: several v1= in the header, several secrets given', async () => {
    const t = now();
    const both = `t=${t},v1=${sign(OLD_SECRET, t, payload)},v1=${sign(SECRET, t, payload)}`;
    await expect(verify(payload, both, SECRET)).resolves.toMatchObject({ id: 'evt_1' });
    await expect(verify(payload, both, OLD_SECRET)).resolves.toMatchObject({ id: 'evt_1' });
    const onlyNew = generateTestHeader({ payload, secret: SECRET, timestamp: t });
    await expect(verify(payload, onlyNew, [OLD_SECRET, SECRET])).resolves.toMatchObject({ id: 'evt_1' });
    await expect(codeOf(verify(payload, onlyNew, [OLD_SECRET]))).resolves.toBe('webhook_signature_mismatch');
  });

  it('skips a v1= that is not hex wherever it stands, and finds the good one among many', async () => {
    const t = now();
    const good = sign(SECRET, t, payload);
    const notHex = `${good.slice(0, 63)}g`;
    const others = Array.from({ length: 11 }, (_, i) => `v1=${sign(`whsec_other${i}`, t, payload)}`).join(
      ',',
    );
    for (const header of [
      `t=${t},v1=${notHex},v1=${good}`,
      `t=${t},v1=${good},v1=${notHex}`,
      // More signatures than the synchronous verifier keeps buffers for (eight): the good one first and last.
      `t=${t},v1=${good},${others}`,
      `t=${t},${others},v1=${good}`,
    ]) {
      await expect(verify(payload, header, SECRET)).resolves.toMatchObject({ id: 'evt_1' });
    }
    await expect(codeOf(verify(payload, `t=${t},${others}`, SECRET))).resolves.toBe(
      'webhook_signature_mismatch',
    );
  });

  it('verifies with each of many secrets in turn and never with one it was not given', async () => {
    // More secrets than the synchronous verifier keeps prepared keys for (sixteen), visited twice.
    const secrets = Array.from({ length: 20 }, (_, i) => `whsec_turn${String(i).padStart(26, '0')}`);
    for (const round of [1, 2]) {
      for (const [index, secret] of secrets.entries()) {
        const header = generateTestHeader({ payload, secret });
        await expect(
          verify(payload, header, secret),
          `round ${round}, secret ${index}`,
        ).resolves.toMatchObject({
          id: 'evt_1',
        });
        const other = secrets[(index + 1) % secrets.length] as string;
        await expect(codeOf(verify(payload, header, other))).resolves.toBe('webhook_signature_mismatch');
      }
    }
  });

  it('ignores signature schemes it does not know', async () => {
    const t = now();
    const header = `t=${t},v0=${'0'.repeat(64)},v1=${sign(SECRET, t, payload)}`;
    await expect(verify(payload, header, SECRET)).resolves.toMatchObject({ id: 'evt_1' });
  });

  it.each([
    ['too old', -301],
    ['too new', 301],
  ])('refuses a timestamp %s for the default 300 s', async (_label, offset) => {
    const header = generateTestHeader({ payload, secret: SECRET, timestamp: now() + offset });
    await expect(codeOf(verify(payload, header, SECRET))).resolves.toBe('webhook_timestamp_out_of_tolerance');
  });

  it.each([
    ['old', -290],
    ['new', 290],
  ])('accepts a timestamp a little %s', async (_label, offset) => {
    const header = generateTestHeader({ payload, secret: SECRET, timestamp: now() + offset });
    await expect(verify(payload, header, SECRET)).resolves.toMatchObject({ id: 'evt_1' });
  });

  it('follows a custom tolerance both ways', async () => {
    const tenMinutesAgo = generateTestHeader({ payload, secret: SECRET, timestamp: now() - 600 });
    await expect(verify(payload, tenMinutesAgo, SECRET, { tolerance: 900 })).resolves.toMatchObject({
      id: 'evt_1',
    });
    const aMinuteAgo = generateTestHeader({ payload, secret: SECRET, timestamp: now() - 60 });
    await expect(codeOf(verify(payload, aMinuteAgo, SECRET, { tolerance: 30 }))).resolves.toBe(
      'webhook_timestamp_out_of_tolerance',
    );
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['no timestamp', `v1=${'a'.repeat(64)}`],
    ['no v1', `t=${Math.floor(Date.now() / 1000)}`],
    ['a v1 that is not hex', `t=${Math.floor(Date.now() / 1000)},v1=zz`],
  ])('refuses %s', async (_label, header) => {
    await expect(codeOf(verify(payload, header, SECRET))).resolves.toBe('webhook_signature_missing');
  });

  it('reads the header as the service writes it and as proxies pass it on', async () => {
    const t = now();
    const signature = sign(SECRET, t, payload);
    for (const header of [
      `t=${t},v1=${signature}`,
      `t=${t},v1=${signature.toUpperCase()}`,
      ` t=${t} , v1=${signature} `,
      `v1=${signature},t=${t}`,
      `t=${t},v0=${'0'.repeat(64)},v1=${'f'.repeat(64)},v1=${signature},`,
    ]) {
      await expect(verify(payload, header, SECRET)).resolves.toEqual(event());
    }
  });

  it.each([
    ['a 13-digit timestamp', (t: number, s: string) => `t=1${String(t).padStart(12, '0')},v1=${s}`],
    ['a signed timestamp with a sign', (t: number, s: string) => `t=+${t},v1=${s}`],
    ['a 63-digit signature', (t: number, s: string) => `t=${t},v1=${s.slice(1)}`],
    ['a 65-digit signature', (t: number, s: string) => `t=${t},v1=${s}0`],
    ['a signature with a non-hex digit', (t: number, s: string) => `t=${t},v1=${s.slice(0, 63)}g`],
  ])('refuses a header with %s as missing its signature', async (_label, make) => {
    const t = now();
    const header = make(t, sign(SECRET, t, payload));
    await expect(codeOf(verify(payload, header, SECRET))).resolves.toBe('webhook_signature_missing');
  });

  it('returns a known event exactly as the contract reads it, and drops an own __proto__ key as before', async () => {
    const body = payload.replace('"metadata":{}', '"metadata":{"__proto__":"x","orderId":"7"}');
    const header = generateTestHeader({ payload: body, secret: SECRET });
    const read = (await verify(body, header, SECRET)) as { data: { session: { metadata: object } } };
    expect(read.data.session.metadata).toEqual({ orderId: '7' });
    expect(Object.hasOwn(read.data.session.metadata, '__proto__')).toBe(false);
  });

  it('takes the first value when the header arrives as an array', async () => {
    const header = generateTestHeader({ payload, secret: SECRET });
    await expect(verify(payload, [header], SECRET)).resolves.toMatchObject({ id: 'evt_1' });
  });

  it('refuses a missing secret', async () => {
    const header = generateTestHeader({ payload, secret: SECRET });
    await expect(codeOf(verify(payload, header, ''))).resolves.toBe('webhook_secret_missing');
    await expect(codeOf(verify(payload, header, []))).resolves.toBe('webhook_secret_missing');
  });

  it.each([
    ['not JSON', 'not json', 'webhook_payload_not_json'],
    ['JSON but not an event', JSON.stringify({ hello: 'world' }), 'webhook_payload_invalid'],
    ['a bare JSON value', '42', 'webhook_payload_invalid'],
    [
      'a known type without its session',
      JSON.stringify({ ...event(), data: { note: 'no session' } }),
      'webhook_payload_invalid',
    ],
  ])('refuses a signed body that is %s as a SignatureVerificationError (so 400)', async (_l, body, code) => {
    const header = generateTestHeader({ payload: body, secret: SECRET });
    await expect(codeOf(verify(body, header, SECRET))).resolves.toBe(code);
    const error = await verify(body, header, SECRET).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignatureVerificationError);
    expect(error).toBeInstanceOf(WebhookPayloadError);
  });

  it('keeps fields a later service version adds to the event and its session', async () => {
    const later = event();
    const body = JSON.stringify({
      ...later,
      addedLater: true,
      data: { ...later.data, session: { ...later.data.session, refundedAmount: 0 } },
    });
    const header = generateTestHeader({ payload: body, secret: SECRET });
    await expect(verify(body, header, SECRET)).resolves.toEqual(JSON.parse(body));
  });

  it('returns an event of a type this SDK does not know, as it came, instead of throwing', async () => {
    const refunded = {
      id: 'evt_2',
      type: 'session.refunded',
      environment: 'test',
      createdAt: '2025-01-01T12:00:00.000Z',
      data: { session: { id: 'ses_1', status: 'refunded' }, refund: { amount: 500_000 } },
    };
    const body = JSON.stringify(refunded);
    const header = generateTestHeader({ payload: body, secret: SECRET });
    await expect(verify(body, header, SECRET)).resolves.toEqual(refunded);
  });

  it('returns a known event whose session has a status this SDK does not know', async () => {
    const later = event();
    const body = JSON.stringify({
      ...later,
      data: { session: { ...later.data.session, status: 'on_hold' } },
    });
    const header = generateTestHeader({ payload: body, secret: SECRET });
    await expect(verify(body, header, SECRET)).resolves.toMatchObject({
      type: 'session.successful',
      data: { session: { status: 'on_hold' } },
    });
  });

  it('still refuses an unknown-type body whose signature does not match', async () => {
    const body = JSON.stringify({ ...event(), type: 'session.refunded' });
    const header = generateTestHeader({ payload: body, secret: OLD_SECRET });
    await expect(codeOf(verify(body, header, SECRET))).resolves.toBe('webhook_signature_mismatch');
  });
});

describe('verifySignature', () => {
  it('returns the signed timestamp without reading the body', () => {
    const t = now();
    const notJson = 'not json at all';
    expect(
      verifySignature(
        notJson,
        generateTestHeader({ payload: notJson, secret: SECRET, timestamp: t }),
        SECRET,
      ),
    ).toBe(t);
  });

  it('refuses what constructEvent refuses about the signature', async () => {
    const header = generateTestHeader({ payload, secret: SECRET, timestamp: now() - 301 });
    await expect(
      codeOf(Promise.resolve().then(() => verifySignature(payload, header, SECRET))),
    ).resolves.toBe('webhook_timestamp_out_of_tolerance');
    await expect(
      codeOf(
        Promise.resolve().then(() =>
          verifySignature(payload, generateTestHeader({ payload, secret: OLD_SECRET }), SECRET),
        ),
      ),
    ).resolves.toBe('webhook_signature_mismatch');
  });
});

describe('generateTestHeader', () => {
  it('signs "<t>.<body>" with HMAC-SHA256 in the documented format', () => {
    expect(generateTestHeader({ payload: 'body', secret: SECRET, timestamp: 1_700_000_000 })).toBe(
      `t=1700000000,v1=${sign(SECRET, 1_700_000_000, 'body')}`,
    );
  });

  it('signs bytes exactly as the same text', () => {
    const fromText = generateTestHeader({ payload: 'héllo', secret: SECRET, timestamp: 1 });
    const fromBytes = generateTestHeader({ payload: Buffer.from('héllo'), secret: SECRET, timestamp: 1 });
    expect(fromBytes).toBe(fromText);
  });
});
