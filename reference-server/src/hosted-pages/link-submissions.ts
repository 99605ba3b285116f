import { createHash } from 'node:crypto';
import type { IdempotencyClaim } from '../db/idempotency-keys.ts';
import type { Store } from '../db/store.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import { FORM_LIFETIME_MS } from './link-form-token.ts';

/** The answer a submission got: the 303 to its session's hosted checkout. */
const SEE_OTHER = 303;

/** What identifies one submission of a link's form: the form's token and the details sent with it. */
export interface LinkSubmission {
  linkId: string;
  formToken: string;
  details: { name: string; email: string; phone?: string | undefined };
}

/**
 * One submission of a link's form makes one session (docs/decisions/payments-without-a-website.md): the
 * answer to a submission (its checkout's address, client secret included, sealed with the SecretBox) is kept in
 * `idempotent_requests` under scope `payment_link:<id>` and a hash of the form's token and the details sent,
 * claimed with the session it makes (`SessionRepository.insertAnswered`, one statement on PostgreSQL). The same
 * form sent again (a double click, a browser re-posting it) gets that address again; the same form with other
 * details is another submission. A racing request of the same submission finds the claim taken
 * (`IdempotencyKeyTakenError`), so its session is not made, and answers with the first one's address.
 *
 * @example
 * const earlier = await submissions.earlier(submission, now); // '/checkout/ses_…#cs_test_…' or undefined
 * await paymentLinks.openSession(linkId, payer, (created) => submissions.claimFor(submission, locationOf(created), now));
 */
export class LinkSubmissions {
  constructor(
    private readonly store: Pick<Store, 'idempotencyKeys'>,
    private readonly secretBox: SecretBox,
  ) {}

  /** The checkout address an earlier request of this submission was answered with, if any. */
  async earlier(submission: LinkSubmission, now: number): Promise<string | undefined> {
    const { scope, key } = entryOf(submission);
    const found = await this.store.idempotencyKeys.find(scope, key, now - FORM_LIFETIME_MS);
    if (!found || found.statusCode !== SEE_OTHER) return undefined;
    return this.secretBox.open(found.responseBody);
  }

  /** The claim of this submission, with `location` as its answer, for the session's write to make with it. */
  claimFor(submission: LinkSubmission, location: string, now: number): IdempotencyClaim {
    const { scope, key } = entryOf(submission);
    return {
      entry: { scope, key, createdAt: now },
      response: {
        requestHash: Buffer.from(key, 'hex'),
        statusCode: SEE_OTHER,
        responseBody: this.secretBox.seal(location),
      },
      // A form is refused after its lifetime, so no live submission is older than that.
      notBefore: now - FORM_LIFETIME_MS,
    };
  }
}

function entryOf({ linkId, formToken, details }: LinkSubmission): { scope: string; key: string } {
  const key = createHash('sha256')
    .update([formToken, details.name, details.email, details.phone ?? ''].join('\n'))
    .digest('hex');
  return { scope: `payment_link:${linkId}`, key };
}
