import { WebhookEventTypeSchema } from '@servicepay/node/protocol';
import { describe, expect, it } from 'vitest';
import type { PortalContext } from '../portal-auth.ts';
import { webhooksPage } from './webhooks-page.ts';

const context: PortalContext = {
  business: { id: 'biz_1', name: 'Shop', kycApproved: false, createdAt: 0 },
  environment: 'test',
  idHash: Buffer.alloc(32),
  csrfToken: 'token',
};

describe('webhooksPage', () => {
  it('names every event type the contract defines, so a merchant knows what to handle', () => {
    const text = webhooksPage(context, []).value;
    const lead = /<p class="lead">([\s\S]*?)<\/p>/.exec(text)?.[1] ?? '';
    const named = [...lead.matchAll(/<code>(session\.[a-z_]+)<\/code>/g)].map((match) => match[1]);
    expect(named).toEqual(WebhookEventTypeSchema.options);
  });
});
