/**
 * The locale an amount is written in when the payer's browser names none it can use: the locale of the
 * country whose currency it is, in English (the checkout's language). Keyed by ISO 4217 code.
 */
const CURRENCY_LOCALES: Readonly<Record<string, string>> = {
  NGN: 'en-NG',
  GHS: 'en-GH',
  KES: 'en-KE',
  ZAR: 'en-ZA',
  USD: 'en-US',
  GBP: 'en-GB',
  EUR: 'en-IE',
};

/**
 * The first of the browser's languages that the engine formats numbers in, or undefined when it names none.
 * WebKitGTK started with no locale (`LANG=C`) reports `navigator.language` "C", which is no language tag, and
 * its default then resolves to the POSIX variant ("₦ 5000.00"); "und" is the undetermined language.
 */
export function determinedLocale(languages: readonly string[]): string | undefined {
  for (const language of languages) {
    let canonical: string | undefined;
    try {
      canonical = Intl.getCanonicalLocales(language)[0];
    } catch {
      continue; // "C", "POSIX", "" and other strings that are no BCP 47 tag.
    }
    if (!canonical || canonical === 'und' || canonical.startsWith('und-')) continue;
    if (/-u(-[a-z0-9]{2,8})*-va-posix\b/i.test(canonical)) continue;
    if (Intl.NumberFormat.supportedLocalesOf(canonical).length > 0) return canonical;
  }
  return undefined;
}

/** The languages of the browser the frame runs in (none outside a browser). */
function browserLanguages(): readonly string[] {
  const navigator = (globalThis as { navigator?: { languages?: readonly string[]; language?: string } })
    .navigator;
  if (navigator?.languages && navigator.languages.length > 0) return navigator.languages;
  return navigator?.language ? [navigator.language] : [];
}

/**
 * The locale to write an amount of `currency` in: the payer's browser's when it names one, else the currency's
 * own (NGN → en-NG), so every engine writes the same "₦5,000.00" (docs/decisions/payments-without-a-website.md).
 *
 * @example
 * amountLocale('NGN', ['C']); // "en-NG"
 * amountLocale('NGN', ['fr-FR']); // "fr-FR"
 */
export function amountLocale(currency: string, languages: readonly string[] = browserLanguages()): string {
  return determinedLocale(languages) ?? CURRENCY_LOCALES[currency] ?? 'en';
}

/**
 * An amount in minor units formatted for its currency, with the currency's own number of decimals
 * (₦5,000.00 for 500000 NGN; ¥500 for 500 JPY), in `locale` (by default {@link amountLocale}'s choice).
 *
 * @example
 * formatAmount(500_000, 'NGN', 'en-NG'); // "₦5,000.00"
 */
export function formatAmount(minor: number, currency: string, locale = amountLocale(currency)): string {
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
