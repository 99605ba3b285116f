import { WebhookEventTypeSchema } from '@servicepay/node/protocol';
import { describe, expect, it } from 'vitest';
import { RETRY_SCHEDULES, retrySpanMs } from '../../events/retry-schedule.ts';
import { formatSpan } from '../format.ts';
import type { PortalContext } from '../portal-auth.ts';
import { webhooksPage } from './webhooks-page.ts';

const context: PortalContext = {
  business: { id: 'biz_1', name: 'Shop', kycApproved: false, createdAt: 0 },
  environment: 'test',
  idHash: Buffer.alloc(32),
  csrfToken: 'token',
  apiKeyId: 'key_1',
};

describe('webhooksPage', () => {
  it('names every event type the contract defines, so a merchant knows what to handle', () => {
    const text = webhooksPage(context, [], retrySpanMs(RETRY_SCHEDULES.standard)).value;
    const lead = /<p class="lead">([\s\S]*?)<\/p>/.exec(text)?.[1] ?? '';
    const named = [...lead.matchAll(/<code>((?:session|refund)\.[a-z_]+)<\/code>/g)].map((match) => match[1]);
    expect(named).toEqual(WebhookEventTypeSchema.options);
  });

  it('says how long a delivery is retried on the schedule the service runs, not always the standard one', () => {
    const lead = (span: number) =>
      /<p class="lead">([\s\S]*?)<\/p>/.exec(webhooksPage(context, [], span).value)?.[1];
    expect(lead(retrySpanMs(RETRY_SCHEDULES.standard))).toContain('retrying for about 3 days.');
    // npm start runs the fast schedule: a developer's failing handler is retried for about a minute.
    expect(lead(retrySpanMs(RETRY_SCHEDULES.fast))).toContain('retrying for about a minute.');
  });
});

describe('formatSpan', () => {
  it.each([
    [30_000, 'about 30 seconds'],
    [61_250, 'about a minute'],
    [5 * 60_000, 'about 5 minutes'],
    [90 * 60_000, 'about 2 hours'],
    [71.6 * 3_600_000, 'about 3 days'],
  ])('%d ms reads "%s"', (ms, words) => {
    expect(formatSpan(ms)).toBe(words);
  });
});
