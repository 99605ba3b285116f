import { describe, expect, it } from 'vitest';
import { dayIn, ReportRangeError, reportRange, zoneMidnight } from './report-range.ts';

describe('report ranges', () => {
  it('finds a day’s midnight in each zone, across daylight saving', () => {
    expect(zoneMidnight('2026-12-01', 'UTC')).toBe(Date.UTC(2026, 11, 1));
    expect(zoneMidnight('2026-12-01', 'Africa/Lagos')).toBe(Date.UTC(2026, 10, 30, 23));
    expect(zoneMidnight('2026-12-01', 'Africa/Nairobi')).toBe(Date.UTC(2026, 10, 30, 21));
    expect(zoneMidnight('2026-07-01', 'Europe/London')).toBe(Date.UTC(2026, 5, 30, 23));
    expect(zoneMidnight('2026-12-01', 'America/New_York')).toBe(Date.UTC(2026, 11, 1, 5));
    // New York springs forward on 2026-03-08: that day has 23 hours, the one in November 25.
    const march = reportRange({ from: '2026-03-08', to: '2026-03-08', zone: 'America/New_York' }, 0);
    expect((march.bounds[1] ?? 0) - (march.bounds[0] ?? 0)).toBe(23 * 3600_000);
    const november = reportRange({ from: '2026-11-01', to: '2026-11-01', zone: 'America/New_York' }, 0);
    expect((november.bounds[1] ?? 0) - (november.bounds[0] ?? 0)).toBe(25 * 3600_000);
  });

  it('defaults to the last 7 days in UTC, today included', () => {
    const range = reportRange({}, Date.UTC(2026, 11, 5, 13));
    expect(range).toMatchObject({ from: '2026-11-29', to: '2026-12-05', zone: 'UTC' });
    expect(range.days).toHaveLength(7);
    expect(range.bounds.at(-1)).toBe(Date.UTC(2026, 11, 6));
    expect(dayIn(Date.UTC(2026, 11, 5, 23, 30), 'Africa/Lagos')).toBe('2026-12-06');
  });

  it('refuses a backwards range and one longer than a quarter', () => {
    expect(() => reportRange({ from: '2026-12-02', to: '2026-12-01' }, 0)).toThrow(ReportRangeError);
    expect(() => reportRange({ from: '2026-01-01', to: '2026-12-01' }, 0)).toThrow(/at most 92 days/);
  });
});
