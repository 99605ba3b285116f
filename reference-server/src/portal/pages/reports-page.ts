import { HttpError } from '../../errors.ts';
import { type BooksReport, booksReport } from '../../exports/books-report.ts';
import { type ExportKind, ExportService } from '../../exports/export-service.ts';
import {
  REPORT_ZONES,
  type ReportQuery,
  ReportQuerySchema,
  type ReportRange,
  ReportRangeError,
  reportRange,
} from '../../exports/report-range.ts';
import { sendCsv } from '../../routes/csv-response.ts';
import { defineOperation, htmlPage, seeOther } from '../../routes/operation.ts';
import { formatMoney } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { page, sendPage } from '../layout.ts';
import { netChart } from '../net-chart.ts';
import type { PortalContext } from '../portal-auth.ts';

/** The range a query asks for, or the 400 page that says what is wrong with it. */
function rangeOf(query: ReportQuery, now: number): ReportRange {
  try {
    return reportRange(query, now);
  } catch (error) {
    if (error instanceof ReportRangeError) throw new HttpError(400, 'validation_failed', error.message);
    throw error;
  }
}

/** The range's query string, as the page's own links carry it. */
const queryOf = (range: ReportRange) =>
  new URLSearchParams({ from: range.from, to: range.to, zone: range.zone });

/** One download of the page: the same CSV as `GET /api/exports/<kind>`, for the range's instants. */
const download = <const K extends ExportKind, const Id extends string>(kind: K, operationId: Id) =>
  defineOperation({
    method: 'get',
    path: `/portal/reports/${kind}.csv`,
    operationId,
    tag: 'Portal',
    summary: `Reports page: download the ${kind.replace('-', ' ')} of the range as CSV`,
    auth: 'portalSession',
    query: ReportQuerySchema,
    success: {
      200: { kind: 'csv', description: `The ${kind.replace('-', ' ')} as a CSV download.` },
      303: seeOther('Not signed in.'),
    },
    // A range the page cannot chart (backwards, over 92 days) is refused by the handler.
    errors: [400],
    handler: async ({ caller, query, res }, { store, clock }) => {
      const range = rangeOf(query, clock.now());
      const request = {
        businessId: caller.business.id,
        environment: caller.environment,
        createdFrom: new Date(range.bounds[0] ?? 0).toISOString(),
        createdTo: new Date(range.bounds.at(-1) ?? 0).toISOString(),
      };
      const exports = new ExportService(store);
      await sendCsv(res, exports.filename(kind, request), exports.pages(kind, request));
    },
  });

/** The Reports page (`GET /portal/reports`) and its two downloads, read from the ledger. */
export const REPORTS_PAGE = [
  defineOperation({
    method: 'get',
    path: '/portal/reports',
    operationId: 'portalReports',
    tag: 'Portal',
    summary: 'Reports page (totals and net per day for a range of days)',
    auth: 'portalSession',
    query: ReportQuerySchema,
    success: {
      200: htmlPage('Totals in, out and net per currency, and a chart of each day.'),
      303: seeOther('Not signed in.'),
    },
    // A range the page cannot chart (backwards, over 92 days) is refused by the handler.
    errors: [400],
    handler: async ({ caller, query, res }, { store, clock }) => {
      const range = rangeOf(query, clock.now());
      const owner = { businessId: caller.business.id, environment: caller.environment };
      sendPage(res, reportsPage(caller, await booksReport(store, owner, range)));
    },
  }),
  download('balance-transactions', 'portalReportBalanceTransactions'),
  download('sessions', 'portalReportSessions'),
] as const;

/** The day-by-day figures of one currency: the chart's text alternative. */
function dailyTable(report: BooksReport, currency: string, nets: number[], id: string): SafeHtml {
  return html`<details class="daily">
  <summary>Each day's net in ${currency}, as a table</summary>
  <div class="table-wrap" role="region" aria-labelledby="${id}-caption" tabindex="0"><table class="stack">
    <caption id="${id}-caption">Net per day, ${currency} (${report.range.zone})</caption>
    <thead><tr><th scope="col">Day</th><th scope="col">Net</th></tr></thead>
    <tbody>${report.range.days.map(
      (day, index) =>
        html`<tr><th scope="row">${day}</th><td class="num" data-label="Net">${formatMoney(nets[index] ?? 0, currency)}</td></tr>`,
    )}</tbody>
  </table></div>
</details>`;
}

/**
 * Reports: for a range of whole days in a time zone, what came in, what went out and the net per currency,
 * a chart of each day's net, and the range's balance transactions and sessions as CSV downloads.
 *
 * @example
 * res.send(reportsPage(context, await booksReport(store, owner, reportRange({}, Date.now()))).value);
 */
export function reportsPage(context: PortalContext, report: BooksReport): SafeHtml {
  const { range } = report;
  const query = queryOf(range).toString();
  // Out is shown negative, as it moves the balance; nothing out is 0, not "-0".
  const out = (minor: number, currency: string) => formatMoney(minor === 0 ? 0 : -minor, currency);
  const totals = report.totals.map(
    (total) => html`<tr>
  <th scope="row">${total.currency}</th>
  <td class="num" data-label="In">${formatMoney(total.collected, total.currency)}</td>
  <td class="num" data-label="Out">${out(total.refunded + total.returned, total.currency)}</td>
  <td class="num" data-label="Net"><strong>${formatMoney(total.net, total.currency)}</strong></td>
  <td class="num" data-label="Refunded">${out(total.refunded, total.currency)}</td>
  <td class="num" data-label="Returned">${out(total.returned, total.currency)}</td>
  <td class="num" data-label="Entries">${total.count}</td>
</tr>`,
  );
  const charts = report.daily.map(({ currency, nets }) => {
    const id = `chart-${currency.toLowerCase()}`;
    return html`<section class="card" aria-labelledby="${id}-heading">
  <h2 id="${id}-heading">Net per day, ${currency}</h2>
  ${netChart(currency, range.days, nets, id)}
  ${dailyTable(report, currency, nets, id)}
</section>`;
  });
  return page({
    title: 'Reports',
    context,
    section: 'reports',
    path: '/portal/reports',
    body: html`<h1>Reports <span class="env-chip">${context.environment}</span></h1>
<form method="get" action="/portal/reports" class="filters" aria-label="Range of days">
  <div class="field">
    <label for="from">First day</label>
    <input id="from" name="from" type="date" value="${range.from}" required>
  </div>
  <div class="field">
    <label for="to">Last day</label>
    <input id="to" name="to" type="date" value="${range.to}" required>
  </div>
  <div class="field">
    <label for="zone">Days in</label>
    <select id="zone" name="zone">
      ${REPORT_ZONES.map((zone) =>
        zone === range.zone
          ? html`<option value="${zone}" selected>${zone}</option>`
          : html`<option value="${zone}">${zone}</option>`,
      )}
    </select>
  </div>
  <button type="submit" class="button">Show</button>
</form>
<p class="muted">From ${range.from} 00:00 to the end of ${range.to}, ${range.zone} time: every movement of money in the ledger, once.</p>
${
  report.totals.length === 0
    ? html`<p class="empty">No money moved in these days.</p>`
    : html`<div class="table-wrap" role="region" aria-labelledby="totals-caption" tabindex="0"><table class="stack">
  <caption id="totals-caption">Totals per currency</caption>
  <thead><tr><th scope="col">Currency</th><th scope="col">In</th><th scope="col">Out</th><th scope="col">Net</th><th scope="col">Refunded</th><th scope="col">Returned</th><th scope="col">Entries</th></tr></thead>
  <tbody>${totals}</tbody>
</table></div>
${charts}`
}
<section class="card" aria-labelledby="downloads-heading">
  <h2 id="downloads-heading">Downloads</h2>
  <p>CSV (UTF-8) for these days, ready for a spreadsheet: amounts in minor units, text that could run as a formula starts with <code>'</code>.</p>
  <ul class="downloads">
    <li><a class="button" href="/portal/reports/balance-transactions.csv?${query}" download>Balance transactions (CSV)</a></li>
    <li><a class="button button-quiet" href="/portal/reports/sessions.csv?${query}" download>Sessions (CSV)</a></li>
  </ul>
</section>`,
  });
}
