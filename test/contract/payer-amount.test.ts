import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payerAmount } from '../../reference-server/src/hosted-pages/payer-amount.ts';
import { amountLocale, formatAmount } from '../../widget/src/frame/format.ts';
import { call } from '../support/api.ts';
import { checkoutLocation, openLinkPage, submitLinkForm } from '../support/link-page.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// A payment link's page writes the amount on the server, the checkout it leads to writes it in the browser
// (widget/src/frame/format.ts): the payer must read the same text on both, so both follow one rule, the
// browser's languages first, else the currency's country's (docs/decisions/payments-without-a-website.md).

/** The text of the page's `.amount` paragraph. */
const amountOf = (html: string) => /<p class="amount"[^>]*>([^<]*)<\/p>/.exec(html)?.[1];

describe("the amount's text: the link page (server) and the checkout (widget)", () => {
  it('is the same for every currency the table names, and others, whatever the browser says its languages are', () => {
    const currencies = ['NGN', 'GHS', 'KES', 'ZAR', 'USD', 'GBP', 'EUR', 'JPY', 'XOF'];
    const browsers: string[][] = [
      [],
      ['C'],
      ['POSIX', ''],
      ['und'],
      ['en-US-u-va-posix'],
      ['en-US', 'en'],
      ['fr-FR', 'fr'],
      ['C', 'de-DE'],
      ['hi-IN'],
    ];
    for (const currency of currencies) {
      for (const languages of browsers) {
        // The browser sends as Accept-Language the languages it reports as navigator.languages, in that order.
        const header = languages.length === 0 ? undefined : languages.join(',');
        expect(payerAmount(1_250_075, currency, header), `${currency} ${header}`).toBe(
          formatAmount(1_250_075, currency, amountLocale(currency, languages)),
        );
      }
    }
  });

  it('reads Accept-Language by its weights, leaving out * and q=0', () => {
    expect(payerAmount(1_250_000, 'NGN', 'de-DE;q=0.5, fr-FR, *;q=0.1')).toBe('12\u202f500,00\u00a0₦');
    expect(payerAmount(1_250_000, 'NGN', 'fr-FR;q=0, *')).toBe('₦12,500.00');
  });
});

describe("the link's page and the hosted checkout page on a real server", () => {
  let server: RunningServer;
  let key: string;

  beforeAll(async () => {
    server = await startServer({ rateLimit: { perMinute: 10_000 } });
    key = (await server.createBusiness({ name: 'Amount Shop' })).keys.test.secretKey;
  });

  afterAll(async () => {
    await server?.close();
  });

  it("write the amount in the browser's language, else the currency's country's: the exact text", async () => {
    const link = await call(server.baseUrl, 'POST', '/api/payment-links', {
      token: key,
      json: { name: 'Ankara, 6 yards', amount: 1_250_000, currency: 'NGN' },
    });
    expect(link.status, link.text).toBe(201);
    const url = link.body.data.url as string;
    const page = async (acceptLanguage?: string) =>
      amountOf(
        await (
          await fetch(url, acceptLanguage ? { headers: { 'accept-language': acceptLanguage } } : {})
        ).text(),
      );
    expect(await page()).toBe('₦12,500.00');
    expect(await page('en-US,en;q=0.9')).toBe('₦12,500.00');
    expect(await page('fr-FR,fr;q=0.9')).toBe('12\u202f500,00\u00a0₦');
    expect(await page('de-DE')).toBe('12.500,00\u00a0₦');

    // The hosted checkout page the form leads to writes it the same way.
    const visit = await openLinkPage(url);
    const posted = await submitLinkForm(url, visit, { name: 'Ada Lovelace', email: 'ada@example.com' });
    const { sessionId } = checkoutLocation(posted.headers.get('location'));
    const checkout = `${server.widgetUrls.test}/checkout/${sessionId}`;
    const french = await fetch(checkout, { headers: { 'accept-language': 'fr-FR' } });
    expect(amountOf(await french.text())).toBe('12\u202f500,00\u00a0₦');
    expect(amountOf(await (await fetch(checkout)).text())).toBe('₦12,500.00');
  });
});
