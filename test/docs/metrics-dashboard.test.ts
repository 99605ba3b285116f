import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  metricsRegistry,
  startRecording,
  stopRecording,
} from '../../reference-server/src/metrics/metrics.ts';

// Issue 28: docs/production.md lists alerts with their PromQL and ships a Grafana dashboard built on the
// service's metrics. A query naming a metric the service does not export (a typo, a renamed metric) is an
// alert that never fires and a panel that stays empty: every one is checked against the registry.

const production = readFileSync(new URL('../../docs/production.md', import.meta.url), 'utf8');
const dashboard = JSON.parse(
  readFileSync(new URL('../../docs/grafana/servicepay-dashboard.json', import.meta.url), 'utf8'),
) as { title: string; panels: Array<{ title: string; targets: Array<{ expr: string }> }> };

/** Series Prometheus adds itself, not the service. */
const PROMETHEUS_OWN = new Set(['up']);

/** Every series name the service exports: a histogram's `_bucket`, `_sum` and `_count` included. */
async function exportedNames(): Promise<Set<string>> {
  startRecording(); // registers prom-client's default metrics (process_*, nodejs_*) too
  try {
    const names = new Set<string>();
    for (const metric of await metricsRegistry.getMetricsAsJSON()) {
      names.add(metric.name);
      if (String(metric.type) === 'histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    }
    return names;
  } finally {
    stopRecording();
  }
}

/** The metric names a PromQL expression reads: identifiers before `{`, `[`, or standing alone as a series. */
function metricNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""').replace(/#.*$/gm, '');
  const names = withoutStrings.match(/\b(?:servicepay|process|nodejs)_[a-z0-9_]+\b|\bup\b/g) ?? [];
  return [...new Set(names)];
}

const alerts = [...production.matchAll(/```promql\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
const panels = dashboard.panels.flatMap((panel) =>
  panel.targets.map((target) => ({ panel: panel.title, expr: target.expr })),
);

describe('the alerts and the dashboard read what the service exports', () => {
  it('production.md has the alerts the issue names, each a PromQL block', () => {
    const names = alerts.map((block) => /^# (\w+):/.exec(block)?.[1]);
    expect(names).toEqual(
      expect.arrayContaining([
        'WebhookBacklogOld',
        'WebhookDeliveriesFailing',
        'InstanceNotReady',
        'BankNotificationsSlow',
      ]),
    );
  });

  it('the dashboard parses and has a panel for each area', () => {
    expect(dashboard.title).toBe('ServicePay');
    const read = new Set(panels.flatMap(({ expr }) => metricNames(expr)));
    for (const name of [
      'servicepay_http_request_duration_seconds_bucket',
      'servicepay_sessions_created_total',
      'servicepay_bank_notification_processing_seconds_bucket',
      'servicepay_webhook_backlog_oldest_age_seconds',
      'servicepay_push_streams_open',
      'servicepay_db_pool_connections',
      'servicepay_unapplied_credits_total',
    ])
      expect(read).toContain(name);
  });

  it('every PromQL of the alerts and the panels names at least one metric, and only metrics the service exports', async () => {
    const exported = await exportedNames();
    const queries = [...alerts.map((expr) => ({ panel: 'alert', expr })), ...panels];
    expect(queries.length).toBeGreaterThan(20);
    const unknown = queries.flatMap(({ panel, expr }) => {
      const names = metricNames(expr);
      if (names.length === 0) return [`${panel}: names no metric: ${expr}`];
      return names
        .filter((name) => !exported.has(name) && !PROMETHEUS_OWN.has(name))
        .map((name) => `${panel}: ${name}`);
    });
    expect(unknown).toEqual([]);
  });
});
