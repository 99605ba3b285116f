import { describe, expect, it } from 'vitest';
import { backoffDelay, isRetryableStatus, parseRetryAfter } from './retry.ts';

describe('backoffDelay', () => {
  it('doubles from 500 ms up to 8 s', () => {
    expect([0, 1, 2, 3, 4, 5, 10].map((retry) => backoffDelay(retry, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
  });

  it('takes off up to a quarter at random', () => {
    expect(backoffDelay(0, () => 1)).toBe(375);
    expect(backoffDelay(2, () => 0.5)).toBe(1750);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T12:00:00Z');
  it.each([
    ['2', 2000],
    ['0', 0],
    ['1.5', 1500],
    ['Wed, 01 Jan 2025 12:00:10 GMT', 10_000],
    ['Wed, 01 Jan 2025 11:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%s → %s', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('isRetryableStatus', () => {
  it('retries 408, 429 and 5xx only', () => {
    const statuses = [400, 401, 403, 404, 408, 409, 413, 415, 422, 429, 500, 502, 503, 504];
    expect(statuses.filter(isRetryableStatus)).toEqual([408, 429, 500, 502, 503, 504]);
  });
});
