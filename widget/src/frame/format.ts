/**
 * An amount in minor units formatted for its currency, with the currency's own number of decimals
 * (₦5,000.00 for 500000 NGN; ¥500 for 500 JPY).
 *
 * @example
 * formatAmount(500_000, 'NGN', 'en-NG'); // "₦5,000.00"
 */
export function formatAmount(minor: number, currency: string, locale?: string): string {
  const format = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    currencyDisplay: 'narrowSymbol',
  });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

/**
 * Milliseconds left as `mm:ss`, or `h:mm:ss` from an hour up; never negative.
 *
 * @example
 * formatCountdown(125_000); // "02:05"
 */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const two = (value: number) => String(value).padStart(2, '0');
  return hours > 0 ? `${hours}:${two(minutes)}:${two(seconds)}` : `${two(minutes)}:${two(seconds)}`;
}

/** Minutes left at which the countdown is announced to screen readers. */
export const COUNTDOWN_MILESTONES = [10, 5, 1] as const;
