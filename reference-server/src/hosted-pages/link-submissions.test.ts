import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDatabase } from '../db/database.ts';
import { SqlIdempotencyKeyRepository } from '../db/idempotency-keys.ts';
import { SqliteRunner } from '../db/sqlite-runner.ts';
import { SecretBox } from '../internal/secret-box.ts';
import { FORM_LIFETIME_MS } from './link-form-token.ts';
import { type LinkSubmission, LinkSubmissions } from './link-submissions.ts';

// One submission of a link's form, one session: the second request of a submission (a double click racing
// the first) must find its claim taken, so the session written with it is not made (`insertAnswered` throws
// IdempotencyKeyTakenError; test/api/payment-links.test.ts races it through the page on both stores). On a
// real SQLite database (in memory), the claims made as `insertAnswered` makes them.

let db: SqliteDatabase;
let keys: SqlIdempotencyKeyRepository;
let submissions: LinkSubmissions;
/** Makes the claim as the session's write does: true when it was taken, false when another holds it. */
const claim = (location: string, at: number) => {
  const { entry, response, notBefore } = submissions.claimFor(submission, location, at);
  return keys.claim(entry, response, notBefore);
};
const NOW = 1_800_000_000_000;
const submission: LinkSubmission = {
  linkId: 'pl_1',
  formToken: '1800000000000.abc',
  details: { name: 'Ada Lovelace', email: 'ada@example.com' },
};

beforeEach(() => {
  db = openDatabase(':memory:');
  keys = new SqlIdempotencyKeyRepository(new SqliteRunner(db));
  submissions = new LinkSubmissions({ idempotencyKeys: keys }, new SecretBox(randomBytes(32)));
});

afterEach(() => {
  db.close();
});

describe('LinkSubmissions', () => {
  it('answers a submission again with its checkout, sealed at rest; a second claim of it throws', async () => {
    expect(await submissions.earlier(submission, NOW)).toBeUndefined();
    expect(await claim('/checkout/ses_1#cs_test_secret', NOW)).toBe(true);
    expect(await submissions.earlier(submission, NOW + 1_000)).toBe('/checkout/ses_1#cs_test_secret');
    const stored = db.prepare('SELECT scope, response_body AS body FROM idempotent_requests').all() as Array<{
      scope: string;
      body: string;
    }>;
    expect(stored).toHaveLength(1);
    expect(stored[0]?.scope).toBe('payment_link:pl_1');
    expect(stored[0]?.body).not.toContain('cs_test_secret');
    // The racing request of the same submission: its claim is refused, so its session is not made.
    expect(await claim('/checkout/ses_2#cs_test_other', NOW + 5)).toBe(false);
    expect(await submissions.earlier(submission, NOW + 10)).toBe('/checkout/ses_1#cs_test_secret');
  });

  it('keeps submissions apart: other details, another form, another link, or a form past its lifetime', async () => {
    expect(await claim('/checkout/ses_1#cs_test_a', NOW)).toBe(true);
    const others: LinkSubmission[] = [
      { ...submission, details: { ...submission.details, email: 'grace@example.com' } },
      { ...submission, details: { ...submission.details, phone: '+2348012345678' } },
      { ...submission, formToken: '1800000000001.abc' },
      { ...submission, linkId: 'pl_2' },
    ];
    for (const other of others) expect(await submissions.earlier(other, NOW)).toBeUndefined();
    expect(await submissions.earlier(submission, NOW + FORM_LIFETIME_MS + 1)).toBeUndefined();
  });
});
