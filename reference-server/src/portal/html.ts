/** Markup that is already safe: built by `html` (which escapes what it interpolates) or by `trustedHtml`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML: every character that could open a tag, an entity or end an attribute is escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

/** Values a template may hold: text (escaped), safe markup, lists of either, or nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/**
 * The portal's only way to build markup: every interpolated value is escaped unless it is itself `SafeHtml`,
 * so a merchant name, a payer name or metadata holding `<script>` is shown as text, never run.
 *
 * @example
 * const row = html`<td>${session.payer.name}</td>`; // '<td>&lt;b&gt;Ada&lt;/b&gt;</td>' for '<b>Ada</b>'
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

/**
 * Markup from a constant the portal wrote itself (never from data).
 *
 * @example
 * const arrow = trustedHtml('&rarr;');
 */
export const trustedHtml = (markup: string): SafeHtml => new SafeHtml(markup);
