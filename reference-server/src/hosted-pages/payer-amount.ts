/**
 * The locale an amount is written in when the payer's browser names none it can use: the locale of the
 * country whose currency it is, in English. The widget's table (widget/src/frame/format.ts), which the
 * checkout the payer is sent to writes with, copied: the widget's bundle takes nothing of the server, and the
 * server nothing of the widget's sources. test/contract/payer-amount.test.ts holds the two to the same text.
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
 * The browser's languages as its `Accept-Language` header lists them, most wanted first (what it reports as
 * `navigator.languages`); `*` and languages it ranks `q=0` are left out.
 *
 * @example
 * acceptedLanguages('fr-FR,fr;q=0.9,en;q=0.8'); // ['fr-FR', 'fr', 'en']
 */
export function acceptedLanguages(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)?.[1]).find((value) => value);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter(({ tag, q }) => tag !== '' && tag !== '*' && q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map(({ tag }) => tag);
}

/** The first language the engine formats numbers in that is a real language tag (not `C`, `und`, POSIX). */
function determinedLocale(languages: readonly string[]): string | undefined {
  for (const language of languages) {
    let canonical: string | undefined;
    try {
      canonical = Intl.getCanonicalLocales(language)[0];
    } catch {
      continue;
    }
    if (!canonical || canonical === 'und' || canonical.startsWith('und-')) continue;
    if (/-u(-[a-z0-9]{2,8})*-va-posix\b/i.test(canonical)) continue;
    if (Intl.NumberFormat.supportedLocalesOf(canonical).length > 0) return canonical;
  }
  return undefined;
}

/**
 * An amount as the checkout the payer is about to see writes it (docs/decisions/payments-without-a-website.md):
 * the currency's own symbol and decimals, in the payer's browser's language when its `Accept-Language` names
 * one, else in the currency's country's (NGN → en-NG: `₦12,500.00`), as the widget chooses from
 * `navigator.languages`.
 *
 * @example
 * payerAmount(1_250_000, 'NGN', undefined); // '₦12,500.00'
 * payerAmount(1_250_000, 'NGN', 'fr-FR,fr;q=0.9'); // '12 500,00 ₦'
 */
export function payerAmount(minor: number, currency: string, acceptLanguage: string | undefined): string {
  const locale = determinedLocale(acceptedLanguages(acceptLanguage)) ?? CURRENCY_LOCALES[currency] ?? 'en';
  try {
    const format = new Intl.NumberFormat(locale, {
      style: 'currency',
      currency,
      currencyDisplay: 'narrowSymbol',
    });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    return format.format(minor / 10 ** digits);
  } catch {
    return `${currency} ${(minor / 100).toFixed(2)}`;
  }
}
