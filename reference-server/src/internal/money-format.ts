const fractionDigits = (currency: string): number => {
  try {
    return (
      new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ??
      2
    );
  } catch {
    return 2;
  }
};

/**
 * An amount in minor units as people read it (`₦5,000.00`), falling back to the code for unknown currencies.
 *
 * @example
 * formatMoney(500000, 'NGN'); // 'NGN 5,000.00'
 */
export function formatMoney(amount: number, currency: string): string {
  const digits = fractionDigits(currency);
  const major = amount / 10 ** digits;
  try {
    return new Intl.NumberFormat('en', {
      style: 'currency',
      currency,
      currencyDisplay: 'code',
      minimumFractionDigits: digits,
    }).format(major);
  } catch {
    return `${currency} ${major.toFixed(digits)}`;
  }
}
