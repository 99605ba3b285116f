import type { PublicSession } from '@servicepay/node/protocol';
import { nothing, type TemplateResult } from 'lit';
import { describe, expect, it, vi } from 'vitest';
import { frameTexts, hostTexts } from '../../texts.ts';
import { renderScreen, type Screen, type ScreenActions, type ScreenView } from './frame-screens.ts';

// The way out to the merchant, read from the screens' own templates (no DOM: the template's strings with its
// values filled in, click handlers kept by name). The browser suites click it in the real checkout
// (test/browser/checkout-expiry.test.ts, checkout-endings.test.ts, engines-hosted-pages.test.ts); these pin
// that every screen with one says it the same way and that each calls the action it should.

// Lit's development build says once, on import, that it is one: said already, so the run stays quiet (this file
// imports the templates only to read them). Hoisted above the imports, which run before any test's console spy.
vi.hoisted(() => {
  const global = globalThis as { litIssuedWarnings?: Set<string> };
  global.litIssuedWarnings ??= new Set();
  global.litIssuedWarnings.add('dev-mode');
});

type ActionName = keyof ScreenActions;

/** Actions that answer their own name, so a button's click handler says which one it is. */
function namedActions(): { actions: ScreenActions; nameOf: Map<unknown, ActionName> } {
  const names: ActionName[] = [
    'sentMoney',
    'showDetails',
    'copy',
    'retry',
    'requestClose',
    'keepPaying',
    'cancelPayment',
    'reconnect',
    'leave',
    'close',
  ];
  const actions = Object.fromEntries(
    names.map((name) => [name, () => undefined]),
  ) as unknown as ScreenActions;
  return { actions, nameOf: new Map(names.map((name) => [actions[name], name])) };
}

/** The template as markup: values written in, each function as `fn:<action name>`. */
function markup(value: unknown, nameOf: Map<unknown, ActionName>): string {
  if (value === nothing || value === null || value === undefined || value === false) return '';
  if (typeof value === 'function') return `fn:${nameOf.get(value) ?? 'unknown'}`;
  if (Array.isArray(value)) return value.map((item) => markup(item, nameOf)).join('');
  if (typeof value === 'object' && 'strings' in value && 'values' in value) {
    const template = value as TemplateResult;
    return template.strings.reduce(
      (out, text, index) =>
        out + text + (index < template.values.length ? markup(template.values[index], nameOf) : ''),
      '',
    );
  }
  return String(value);
}

/** The screen's buttons, in order: their words and the action a click calls. */
function buttonsOf(view: ScreenView): { text: string; action: string }[] {
  const { actions, nameOf } = namedActions();
  const html = markup(renderScreen(view, actions), nameOf);
  return [...html.matchAll(/<button([^>]*)>([\s\S]*?)<\/button>/g)].map(
    ([, attributes = '', inner = '']) => ({
      text: inner.replace(/\s+/g, ' ').trim(),
      action: /@click=fn:(\w+)/.exec(attributes)?.[1] ?? 'none',
    }),
  );
}

const SESSION: PublicSession = {
  id: 'ses_test',
  reference: 'order-1',
  status: 'awaiting_payment',
  environment: 'test',
  amount: 500_000,
  currency: 'NGN',
  merchantName: 'Ada Stores',
  expiresAt: '2026-12-05T18:00:00.000Z',
};

function view(screen: Screen, session: PublicSession | undefined, canReconnect = false): ScreenView {
  return {
    screen,
    session,
    account: undefined,
    mismatch: undefined,
    remainingMs: 0,
    errorMessage: 'We could not reach the payment service. Check your connection and try again.',
    canReconnect,
    busy: false,
    copyState: 'idle',
  };
}

describe('the way back to the merchant', () => {
  it('reads "Back to <merchant>" on every screen that has it, and calls that screen\'s own way out', () => {
    expect(buttonsOf(view('expired', SESSION))).toEqual([
      { text: 'Get a new account number', action: 'retry' },
      // The payer's close: the session is cancelled first, then CANCELLED shows.
      { text: 'Back to Ada Stores', action: 'requestClose' },
    ]);
    expect(buttonsOf(view('ended', SESSION))).toEqual([{ text: 'Back to Ada Stores', action: 'leave' }]);
    expect(buttonsOf(view('cancelled', SESSION))).toEqual([{ text: 'Back to Ada Stores', action: 'close' }]);
    expect(buttonsOf(view('error', SESSION))).toEqual([{ text: 'Back to Ada Stores', action: 'leave' }]);
    expect(buttonsOf(view('error', SESSION, true))).toEqual([
      { text: 'Try again', action: 'reconnect' },
      { text: 'Back to Ada Stores', action: 'leave' },
    ]);
  });

  it('says "Back to the seller" without a name: true on a shop\'s page and on the hosted checkout, which has no shop', () => {
    // A session without a name, or none at all (an ERROR before the bootstrap answered).
    for (const session of [{ ...SESSION, merchantName: '' }, undefined]) {
      for (const screen of ['expired', 'ended', 'cancelled', 'error'] as const) {
        expect(buttonsOf(view(screen, session)).at(-1)?.text, screen).toBe('Back to the seller');
      }
    }
    expect(buttonsOf(view('error', undefined))).toEqual([{ text: 'Back to the seller', action: 'leave' }]);
    // The overlay's own way back when the frame never came says the same.
    expect(hostTexts.backToMerchantPlain).toBe(frameTexts.backToMerchantPlain);
  });
});

describe('the sentences about the merchant', () => {
  /** Every payer's sentence of the checkout, functions called with a name and without one. */
  function payerSentences(): string[] {
    const sentences: string[] = [];
    const collect = (value: unknown): void => {
      if (typeof value === 'string') sentences.push(value);
      else if (typeof value === 'function') {
        // The payer's texts take a name, an amount or a number; each is called with one and with none.
        for (const argument of ['Ada Stores', '']) sentences.push(String(value(argument, argument)));
      } else if (value && typeof value === 'object') Object.values(value).forEach(collect);
    };
    collect(frameTexts);
    collect(hostTexts);
    return sentences;
  }

  it('never send the payer to "the shop": the hosted checkout and a payment link have none', () => {
    expect(payerSentences().filter((sentence) => /\bshop\b/i.test(sentence))).toEqual([]);
  });

  it('name the merchant after the account was shown, and say "the seller" without a name', () => {
    expect(frameTexts.followingStopped('Ada Stores')).toBe(
      'We can no longer follow this payment here. If you already sent the money, it is safe: Ada Stores is told as soon as it arrives.',
    );
    expect(frameTexts.followingStopped('')).toBe(
      'We can no longer follow this payment here. If you already sent the money, it is safe: the seller is told as soon as it arrives.',
    );
    // Before the bootstrap answered there is no name: the sentence and the button under it agree.
    expect(frameTexts.cannotOpen).toBe(
      'This checkout could not be opened. Go back to the seller and try again.',
    );
    expect(hostTexts.checkoutUnavailable).toBe(
      'The checkout could not be opened. Go back to the seller and try again.',
    );
    for (const text of [frameTexts.linkInvalid, frameTexts.linkUsed, frameTexts.linkEnded]) {
      expect(text).toMatch(/Go back to the seller and start the payment again\.$/);
    }
  });

  it("SUCCESS says the checkout closes, which is true on a shop's page and on the hosted checkout", () => {
    const { actions, nameOf } = namedActions();
    const html = markup(renderScreen(view('success', SESSION), actions), nameOf);
    expect(html).toContain('<p class="note">This checkout closes in 3 seconds…</p>');
    expect(html).toContain('₦5,000.00 paid to Ada Stores.');
  });
});
