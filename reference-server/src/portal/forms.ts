import {
  EnvironmentSchema,
  KeyKindSchema,
  RefundReasonSchema,
  SessionStatusSchema,
} from '@servicepay/node/protocol';
import { z } from 'zod';

/**
 * The portal's forms (`application/x-www-form-urlencoded`) and page queries, parsed with zod like every other
 * input of the service. Every state-changing form carries `_csrf`, the synchronizer token of the portal session
 * (the sign-in form carries the token of its pre-session cookie). The OpenAPI document is built from these too.
 *
 * @example
 * const form = RollKeyFormSchema.parse({ _csrf: token, environment: 'test', kind: 'secret', confirm: 'yes' });
 */
const csrf = z.string().min(1).max(200);
/** A checkbox that must be ticked: the browser sends `confirm=yes` only then. */
const confirmed = z.literal('yes', { error: 'Tick the box to confirm.' });

/** The page to go back to after signing in: a portal path only (anything else goes to the Sessions page). */
const returnTo = z.string().max(300).optional();

/**
 * The sign-in page's query: `environment` asks for a key of that environment (the header's "Test data / Live
 * data" switch leads here with the other one), `returnTo` the page to come back to.
 */
export const SignInQuerySchema = z.object({ environment: EnvironmentSchema.optional(), returnTo });

export const SignInFormSchema = z.object({
  _csrf: csrf,
  secretKey: z.string().trim().min(1, 'Paste one of your secret keys.').max(200),
  /** The environment the page asked a key of; a key of the other one is refused. */
  environment: EnvironmentSchema.optional(),
  returnTo,
});

export const SignOutFormSchema = z.object({ _csrf: csrf });

/** `environment` names the key's environment as the page showed it; the session's own is the only one taken. */
export const RollKeyFormSchema = z.object({
  _csrf: csrf,
  environment: EnvironmentSchema,
  kind: KeyKindSchema,
  confirm: confirmed,
});

export const CreateEndpointFormSchema = z.object({
  _csrf: csrf,
  url: z.string().trim().min(1, 'Enter the URL of your webhook handler.').max(2048),
  description: z.string().trim().max(500).optional(),
});

export const RevealSecretFormSchema = z.object({ _csrf: csrf, confirm: confirmed });

/** Turns an endpoint on (releasing its parked deliveries at once) or off. */
export const EndpointStateFormSchema = z.object({ _csrf: csrf, enabled: z.enum(['true', 'false']) });

/** Deletes an endpoint: nothing more is sent to its URL, and it no longer counts toward the limit. */
export const DeleteEndpointFormSchema = z.object({ _csrf: csrf, confirm: confirmed });

export const ResendFormSchema = z.object({ _csrf: csrf, eventId: z.string().min(1).max(64) });

export const TransferFormSchema = z.object({
  _csrf: csrf,
  sessionId: z.string().min(1).max(64),
  /** `exact`: the session amount; `other`: the amount typed in, to see a mismatch. */
  choice: z.enum(['exact', 'other']),
  amount: z
    .string()
    .trim()
    .regex(/^\d{0,15}$/, 'The amount is a whole number of minor units (kobo, cents).')
    .optional(),
});

/** Test mode's "expire now" on a session page: which clock runs out (the button pressed names it). */
export const ExpireFormSchema = z.object({ _csrf: csrf, ending: z.enum(['session', 'account']) });

/** Filters and cursor of the Sessions page; an empty select or box means "any". */
export const SessionsQuerySchema = z.object({
  status: z.union([SessionStatusSchema, z.literal('')]).optional(),
  reference: z.string().trim().max(100).optional(),
  startingAfter: z.string().max(64).optional(),
});

/** Filters and cursor of the Events page; an empty select means "any type". */
export const EventsQuerySchema = z.object({
  type: z.string().trim().max(64).optional(),
  startingAfter: z.string().max(64).optional(),
});

/** The note an event's page shows after a resend: the deliveries it queued. */
export const EventQuerySchema = z.object({
  resent: z
    .string()
    .regex(/^\d{1,3}$/)
    .optional(),
});

/** Resends an event: to one endpoint (`endpointId`), or to every enabled endpoint that takes its type. */
export const ResendEventFormSchema = z.object({ _csrf: csrf, endpointId: z.string().max(64).optional() });

/** The Requests page's search (a `Request-Id`, a status class) and cursor (a `Request-Id`). */
export const RequestsQuerySchema = z.object({
  requestId: z.string().trim().max(64).optional(),
  status: z.enum(['', '2xx', '3xx', '4xx', '5xx']).optional(),
  startingAfter: z.string().max(64).optional(),
});

/** The note the Webhooks page shows after an endpoint was deleted. */
export const WebhooksQuerySchema = z.object({ deleted: z.literal('1').optional() });

/** Cursor of an endpoint's deliveries, and a note after a resend. */
export const DeliveriesQuerySchema = z.object({
  startingAfter: z.string().max(64).optional(),
  resent: z.string().max(64).optional(),
  changed: z.enum(['enabled', 'disabled']).optional(),
});

/** The note the bank panel (or an "expire now" button) leaves on the session page (nothing changes on a GET). */
export const SessionDetailQuerySchema = z.object({
  sent: z
    .string()
    .regex(/^\d{1,15}$/)
    .optional(),
  outcome: z.enum(['credited', 'returned']).optional(),
  reason: z.enum(['amount_mismatch', 'account_closed']).optional(),
  /** The note after an "expire now" button. */
  ended: z.enum(['session', 'account']).optional(),
  /** The note after a refund: its id. */
  refund: z.string().max(64).optional(),
});

/**
 * The session page's Refund form, in two steps: `review` shows what would be refunded and asks to confirm;
 * `confirm` refunds, only while the session's refunds still hold `expectedRefunded` (what the review showed),
 * so a second press of the button, or a reload of the post, refunds nothing more.
 */
export const RefundFormSchema = z.object({
  _csrf: csrf,
  step: z.enum(['review', 'confirm']),
  amount: z
    .string()
    .trim()
    .regex(/^\d{0,15}$/, 'The amount is a whole number of minor units (kobo, cents).'),
  reason: z.union([RefundReasonSchema, z.literal('')]).optional(),
  expectedRefunded: z
    .string()
    .regex(/^\d{1,15}$/)
    .optional(),
});
