import type { DueDelivery } from '../db/webhook-deliveries.ts';
import { BoundedMap } from '../internal/bounded-map.ts';
import { toIso } from '../internal/clock.ts';
import type { SecretBox } from '../internal/secret-box.ts';
import { signPayload } from '../internal/signature.ts';

/**
 * The webhook body: `{ id, type, environment, createdAt, data: { session, credit?, refund? } }`. The session
 * JSON is the event's stored payload (and `credit`, `refund` its stored credit or refund), spliced in as is, so
 * the body is built without parsing it.
 *
 * @example
 * const body = webhookBody(delivery); // byte for byte what is signed and posted
 */
export function webhookBody(
  delivery: Pick<DueDelivery, 'eventId' | 'eventType' | 'environment' | 'eventCreatedAt' | 'payload'> & {
    credit?: string | null;
    refund?: string | null;
  },
): string {
  const credit = delivery.credit ? `,"credit":${delivery.credit}` : '';
  const refund = delivery.refund ? `,"refund":${delivery.refund}` : '';
  return `{"id":${JSON.stringify(delivery.eventId)},"type":${JSON.stringify(delivery.eventType)},"environment":${JSON.stringify(delivery.environment)},"createdAt":${JSON.stringify(toIso(delivery.eventCreatedAt))},"data":{"session":${delivery.payload}${credit}${refund}}}`;
}

/**
 * Signs a delivery's body with its endpoint's secret, and with the previous secret too while a rolled secret's
 * grace period lasts (the `X-Service-Signature` header then carries both). Opened secrets are kept by their
 * sealed form (at most 1024, then it starts again), so a busy endpoint's secret is not opened per attempt.
 *
 * @example
 * const { body, signature } = new DeliverySigner(secretBox).sign(delivery, clock.now());
 */
export class DeliverySigner {
  private readonly secretCache = new BoundedMap<string, string>(1024);

  constructor(private readonly secretBox: SecretBox) {}

  /** The body to post and its signature header, signed at `attemptedAt` (ms). */
  sign(delivery: DueDelivery, attemptedAt: number): { body: string; signature: string } {
    const secrets = [this.open(delivery.secretCiphertext)];
    if (
      delivery.previousSecretCiphertext !== null &&
      delivery.previousSecretExpiresAt !== null &&
      delivery.previousSecretExpiresAt > attemptedAt
    ) {
      secrets.push(this.open(delivery.previousSecretCiphertext));
    }
    const body = webhookBody(delivery);
    return { body, signature: signPayload(body, secrets, Math.floor(attemptedAt / 1000)) };
  }

  private open(ciphertext: string): string {
    let secret = this.secretCache.get(ciphertext);
    if (secret === undefined) {
      secret = this.secretBox.open(ciphertext);
      this.secretCache.set(ciphertext, secret);
    }
    return secret;
  }
}
