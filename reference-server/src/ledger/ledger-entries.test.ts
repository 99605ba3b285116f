import { describe, expect, it } from 'vitest';
import { maskAccount } from './ledger-entries.ts';

describe('maskAccount', () => {
  it('keeps the last four digits of an account as the bank gave it, the rest as *', () => {
    expect(maskAccount('0123456789')).toBe('******6789');
    expect(maskAccount('12345678901234')).toBe('**********1234');
    expect(maskAccount('56789')).toBe('*6789');
  });

  it('shows nothing more of a number of four digits or fewer, and keeps no account as null', () => {
    expect(maskAccount('1234')).toBe('1234');
    expect(maskAccount(null)).toBeNull();
    expect(maskAccount(undefined)).toBeNull();
  });
});
