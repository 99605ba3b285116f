import { z } from 'zod';
import {
  MismatchSchema,
  PublicSessionSchema,
  SessionStatusSchema,
  VirtualAccountSchema,
} from './sessions.ts';

/**
 * Milliseconds a client waits before it reconnects to a dropped push stream: every stream opens with
 * `retry: 1000`, so an `EventSource` (and the widget, which backs off from it) reconnects on the service's
 * schedule rather than its own default (3 s in browsers). docs/protocol.md, "Push stream".
 */
export const PUSH_RETRY_MS = 1_000;

/** Why a status message was sent, where the status alone does not say it. */
export const StatusReasonSchema = z.enum(['account_expired', 'cancelled_by_payer', 'cancelled_by_merchant']);
export type StatusReason = z.infer<typeof StatusReasonSchema>;

/**
 * `data:` of every `event: status` on the push stream `GET /api/widget/sessions/{id}/events`.
 * The first message of every connection is the current state; the stream ends after a terminal status.
 */
export const StatusMessageSchema = z.object({
  status: SessionStatusSchema,
  reason: StatusReasonSchema.nullable(),
  session: PublicSessionSchema,
  virtualAccount: VirtualAccountSchema.nullable(),
  mismatch: MismatchSchema.nullable(),
});
export type StatusMessage = z.infer<typeof StatusMessageSchema>;
