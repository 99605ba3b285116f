import type { SessionStatus } from '@servicepay/node/protocol';
import { html, type SafeHtml } from './html.ts';

// Amounts are spelled the same way in the portal and in the API's messages (internal/money-format.ts).
export { formatMoney } from '../internal/money-format.ts';

/**
 * An ISO time as a `<time>` element in UTC, readable and machine-readable.
 *
 * @example
 * formatTime('2026-11-21T20:44:06.227Z'); // <time datetime="…">2026-11-21 20:44:06 UTC</time>
 */
export function formatTime(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`<span class="muted">—</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC</time>`;
}

/**
 * Epoch milliseconds as `formatTime` shows them.
 *
 * @example
 * formatEpoch(session.createdAt);
 */
export const formatEpoch = (ms: number | null): SafeHtml =>
  formatTime(ms === null ? null : new Date(ms).toISOString());

const STATUS_LABELS: Record<SessionStatus, string> = {
  pending: 'Pending',
  awaiting_payment: 'Awaiting payment',
  mismatch: 'Mismatch',
  successful: 'Successful',
  expired: 'Expired',
  cancelled: 'Cancelled',
};

/**
 * A session status as a badge; the text says it, the colour only repeats it.
 *
 * @example
 * statusBadge('successful'); // <span class="badge badge-successful">Successful</span>
 */
export function statusBadge(status: SessionStatus): SafeHtml {
  return html`<span class="badge badge-${status}">${STATUS_LABELS[status]}</span>`;
}

/**
 * A neutral or coloured badge for other states (delivery status, KYC, enabled).
 *
 * @example
 * badge('Enabled', 'good');
 */
export function badge(text: string, tone: 'good' | 'warn' | 'bad' | 'info' | 'neutral'): SafeHtml {
  return html`<span class="badge badge-${tone}">${text}</span>`;
}

/**
 * A span of time as a developer reads it, rounded: "about a minute", "about 5 minutes", "about 3 days".
 *
 * @example
 * formatSpan(61_250); // 'about a minute'
 */
export function formatSpan(ms: number): string {
  const units: Array<[string, number]> = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1000],
  ];
  // The largest unit the span holds at least one and a half of reads best ("about 2 hours", not "about 90
  // minutes"); under a minute and a half it is "about a minute", or seconds.
  const [unit, size] = units.find(([, unitMs]) => ms >= 1.5 * unitMs) ?? ['second', 1000];
  if (unit === 'second' && ms >= 45_000) return 'about a minute';
  const count = Math.max(1, Math.round(ms / size));
  return count === 1 ? `about a ${unit}` : `about ${count} ${unit}s`;
}

/**
 * JSON text indented for reading (a webhook body, an error envelope); text that is not JSON is shown as it is.
 * The page escapes it like any other text.
 *
 * @example
 * prettyJson('{"a":1}'); // '{\n  "a": 1\n}'
 */
export function prettyJson(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}
