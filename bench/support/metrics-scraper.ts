/**
 * Scrapes a bench server's own `GET /metrics` every second while it runs (Prometheus scrapes every 15 to 60 s
 * by default: once a second is the pessimistic case), so that a benchmark with metrics on pays for the
 * exposition too, not only for the recording.
 *
 * @example
 * const { metricsUrl } = await service.start();
 * if (metricsUrl) scrapeEverySecond(metricsUrl);
 */
export function scrapeEverySecond(metricsUrl: string): void {
  const timer = setInterval(() => {
    fetch(metricsUrl)
      .then((response) => response.text())
      .catch(() => undefined);
  }, 1000);
  timer.unref();
}
