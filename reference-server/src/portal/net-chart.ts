import { formatMoney } from './format.ts';
import { html, type SafeHtml } from './html.ts';

// The drawing's own units: the SVG scales to its box (CSS `width: 100%`), so at 320 px a unit is about a pixel
// and the 12-unit labels stay readable; taller bars would only squeeze the page.
const WIDTH = 320;
const HEIGHT = 168;
const LEFT = 4;
const TOP = 20;
const PLOT_HEIGHT = 112;
const LABEL_Y = TOP + PLOT_HEIGHT + 18;

/**
 * A bar chart of each day's net in one currency, drawn on the server as SVG (no script, nothing the CSP
 * refuses): a bar up for a day that took in more than it sent back, down for one that sent back more, on a
 * zero line, with the largest figures and the first and last day written on it. It is an image to assistive
 * technology, named by its title and described in a sentence; the same figures follow in a table
 * (`dailyTable`), which is the chart's text alternative.
 *
 * @example
 * netChart('NGN', ['2026-12-01', '2026-12-02'], [500000, -20000], 'chart-ngn');
 */
export function netChart(currency: string, days: string[], nets: number[], id: string): SafeHtml {
  const highest = Math.max(0, ...nets);
  const lowest = Math.min(0, ...nets);
  const span = highest - lowest || 1;
  const y = (value: number) => TOP + ((highest - value) / span) * PLOT_HEIGHT;
  const zero = y(0);
  const slot = (WIDTH - 2 * LEFT) / Math.max(days.length, 1);
  const bar = Math.max(1, slot * 0.7);
  const bars = nets.map((net, index) => {
    if (net === 0) return html``;
    const top = Math.min(y(net), zero);
    const height = Math.max(1, Math.abs(y(net) - zero));
    const x = LEFT + index * slot + (slot - bar) / 2;
    return html`<rect class="${net > 0 ? 'bar-in' : 'bar-out'}" x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${bar.toFixed(1)}" height="${height.toFixed(1)}"></rect>`;
  });
  const best = nets.indexOf(highest);
  const worst = nets.indexOf(lowest);
  const sentence = `${days.length} days from ${days[0] ?? ''} to ${days.at(-1) ?? ''}.${highest > 0 ? ` Highest net ${formatMoney(highest, currency)} on ${days[best]}.` : ''}${lowest < 0 ? ` Lowest net ${formatMoney(lowest, currency)} on ${days[worst]}.` : ''} Every day's figure is in the table that follows.`;
  return html`<svg class="net-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title ${id}-desc" focusable="false">
  <title id="${id}-title">Net per day, ${currency}</title>
  <desc id="${id}-desc">${sentence}</desc>
  <line class="axis" x1="${LEFT}" x2="${WIDTH - LEFT}" y1="${zero.toFixed(1)}" y2="${zero.toFixed(1)}"></line>
  ${bars}
  <text class="chart-label" x="${LEFT}" y="13">${highest > 0 ? `▲ ${formatMoney(highest, currency)}` : ''}</text>
  <text class="chart-label" x="${WIDTH - LEFT}" y="13" text-anchor="end">${lowest < 0 ? `▼ ${formatMoney(lowest, currency)}` : ''}</text>
  <text class="chart-label" x="${LEFT}" y="${LABEL_Y}">${days[0] ?? ''}</text>
  <text class="chart-label" x="${WIDTH - LEFT}" y="${LABEL_Y}" text-anchor="end">${days.length > 1 ? (days.at(-1) ?? '') : ''}</text>
</svg>`;
}
