import { describe, expect, it } from 'vitest';
import { formatAmount, formatCountdown } from './format.ts';

describe('formatting', () => {
  it('formats minor units with the currency own decimals', () => {
    expect(formatAmount(500_000, 'NGN', 'en-NG')).toBe('₦5,000.00');
    expect(formatAmount(1_999, 'USD', 'en-US')).toBe('$19.99');
    expect(formatAmount(500, 'JPY', 'en-US')).toBe('¥500');
  });

  it('counts down as mm:ss, h:mm:ss from an hour, never below zero', () => {
    expect(formatCountdown(125_000)).toBe('02:05');
    expect(formatCountdown(1_800_000)).toBe('30:00');
    expect(formatCountdown(3_725_000)).toBe('1:02:05');
    expect(formatCountdown(400)).toBe('00:01');
    expect(formatCountdown(-5_000)).toBe('00:00');
  });
});
