import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signPayload, verifySignature } from './signature.ts';

const body = Buffer.from('{"id":"ntf_1","amount":500000}');
const NOW = 1_900_000_000;

describe('signPayload', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', () => {
    const expected = createHmac('sha256', 'secret').update(`${NOW}.${body.toString()}`).digest('hex');
    expect(signPayload(body, ['secret'], NOW)).toBe(`t=${NOW},v1=${expected}`);
    expect(signPayload(body.toString(), ['secret'], NOW)).toBe(`t=${NOW},v1=${expected}`);
  });

  it('adds one v1 per secret while a secret rotates', () => {
    const header = signPayload(body, ['old', 'new'], NOW);
    expect(header.split(',')).toHaveLength(3);
    expect(verifySignature(body, header, 'old', NOW, 300)).toEqual({ ok: true });
    expect(verifySignature(body, header, 'new', NOW, 300)).toEqual({ ok: true });
    expect(verifySignature(body, header, 'other', NOW, 300)).toEqual({ ok: false, reason: 'mismatch' });
  });
});

describe('verifySignature', () => {
  const header = signPayload(body, ['secret'], NOW);

  it('accepts its own signature and refuses another body or secret', () => {
    expect(verifySignature(body, header, 'secret', NOW, 300)).toEqual({ ok: true });
    expect(verifySignature(Buffer.from(`${body} `), header, 'secret', NOW, 300)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifySignature(body, header, 'secreT', NOW, 300)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('tolerates clock difference both ways up to the tolerance, inclusive', () => {
    expect(verifySignature(body, header, 'secret', NOW + 300, 300)).toEqual({ ok: true });
    expect(verifySignature(body, header, 'secret', NOW - 300, 300)).toEqual({ ok: true });
    expect(verifySignature(body, header, 'secret', NOW + 301, 300)).toEqual({ ok: false, reason: 'stale' });
    expect(verifySignature(body, header, 'secret', NOW - 301, 300)).toEqual({ ok: false, reason: 'stale' });
  });

  it('refuses a signature whose timestamp was changed', () => {
    const moved = header.replace(`t=${NOW}`, `t=${NOW + 1}`);
    expect(verifySignature(body, moved, 'secret', NOW, 300)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('finds a valid v1 among wrong ones, and ignores unknown schemes', () => {
    const good = header.split(',')[1] as string;
    const mixed = `t=${NOW},v1=${'0'.repeat(64)},v0=abc,${good},v2=${'f'.repeat(64)}`;
    expect(verifySignature(body, mixed, 'secret', NOW, 300)).toEqual({ ok: true });
    expect(verifySignature(body, ` t=${NOW} , ${good} `, 'secret', NOW, 300)).toEqual({ ok: true });
  });

  it.each([
    ['undefined', undefined],
    ['empty', ''],
    ['no timestamp', `v1=${'a'.repeat(64)}`],
    ['no v1', `t=${NOW}`],
    ['a non-numeric timestamp', `t=abc,v1=${'a'.repeat(64)}`],
    ['a negative timestamp', `t=-1,v1=${'a'.repeat(64)}`],
    ['a short v1', `t=${NOW},v1=abcd`],
    ['an upper-case hex v1', `t=${NOW},v1=${'A'.repeat(64)}`],
    ['a too long header', `t=${NOW},${'v1=0,'.repeat(500)}`],
    ['garbage', '=,=,,=='],
  ])('calls %s malformed', (_what, value) => {
    expect(verifySignature(body, value, 'secret', NOW, 300)).toEqual({ ok: false, reason: 'malformed' });
  });
});
