import { readFileSync } from 'node:fs';
import { WebhookEventTypeSchema } from '@servicepay/node/protocol';
import { expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';

// docs/webhooks.md is where a merchant learns which events to handle: it names every type the contract has
// (issue 8: `session.credit_unapplied` was missing), and no type the contract does not have.

const guide = readFileSync(`${ROOT}/docs/webhooks.md`, 'utf8');

it('docs/webhooks.md names every webhook event type of the contract, and only those', () => {
  const named = new Set([...guide.matchAll(/`((?:session|refund)\.[a-z_]+)`/g)].map((match) => match[1]));
  expect([...named].sort()).toEqual([...WebhookEventTypeSchema.options].sort());
});
