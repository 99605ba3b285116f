import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from './html.ts';

describe('html', () => {
  it('escapes every interpolated string, attribute breakers included', () => {
    const name = `<img src=x onerror="alert(1)">'&`;
    expect(html`<td title="${name}">${name}</td>`.value).toBe(
      '<td title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;</td>',
    );
  });

  it('keeps nested templates and lists as markup, drops null, undefined and booleans', () => {
    const rows = ['<a>', 'b'].map((cell) => html`<li>${cell}</li>`);
    expect(html`<ul>${rows}${null}${undefined}${false}</ul>`.value).toBe(
      '<ul><li>&lt;a&gt;</li><li>b</li></ul>',
    );
  });

  it('escapes numbers as text', () => {
    expect(escapeHtml(String(42))).toBe('42');
    expect(html`${0}`.value).toBe('0');
  });
});
