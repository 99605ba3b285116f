import { describe, expect, it } from 'vitest';
import { amountLocale, determinedLocale, formatAmount, formatCountdown } from './format.ts';

describe('formatting', () => {
  it('formats minor units with the currency own decimals', () => {
    expect(formatAmount(500_000, 'NGN', 'en-NG')).toBe('₦5,000.00');
    expect(formatAmount(1_999, 'USD', 'en-US')).toBe('$19.99');
    expect(formatAmount(500, 'JPY', 'en-US')).toBe('¥500');
  });

  it("writes the amount in the browser's locale when it names one, else in the currency's (issue 36)", () => {
    // WebKitGTK with no locale set: navigator.language is "C", and Intl's default is the POSIX variant.
    expect(amountLocale('NGN', ['C'])).toBe('en-NG');
    expect(amountLocale('NGN', ['POSIX', ''])).toBe('en-NG');
    expect(amountLocale('NGN', [])).toBe('en-NG');
    expect(amountLocale('NGN', ['und'])).toBe('en-NG');
    expect(amountLocale('NGN', ['en-US-u-va-posix'])).toBe('en-NG');
    expect(amountLocale('GHS', ['C'])).toBe('en-GH');
    expect(amountLocale('XOF', ['C'])).toBe('en');
    // A payer's own language wins: the first one the engine formats in.
    expect(amountLocale('NGN', ['C', 'fr-FR', 'en-GB'])).toBe('fr-FR');
    expect(amountLocale('NGN', ['en-us'])).toBe('en-US');
    expect(determinedLocale(['C', 'und-x-private'])).toBeUndefined();
    expect(formatAmount(500_000, 'NGN', amountLocale('NGN', ['C']))).toBe('₦5,000.00');
    // What WebKit showed before: no grouping, a space after the sign.
    expect(formatAmount(500_000, 'NGN', 'en-US-u-va-posix')).toMatch(/^₦\s5000\.00$/u);
    expect(formatAmount(500_000, 'NGN', amountLocale('NGN', ['fr-FR']))).toBe('5\u202f000,00\u00a0₦');
  });

  it('counts down as mm:ss, h:mm:ss from an hour, never below zero', () => {
    expect(formatCountdown(125_000)).toBe('02:05');
    expect(formatCountdown(1_800_000)).toBe('30:00');
    expect(formatCountdown(3_725_000)).toBe('1:02:05');
    expect(formatCountdown(400)).toBe('00:01');
    expect(formatCountdown(-5_000)).toBe('00:00');
  });
});
