import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Environment } from '@servicepay/node/protocol';
import type { DueDelivery } from '../db/webhook-deliveries.ts';
import { redact } from '../internal/logger.ts';
import { checkUrlStatically, classifyAddress, guardedLookup, hostOf } from './webhook-url-policy.ts';

/** Bytes of a receiver's answer kept with the attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024;
/** Bytes of an answer read at most before the connection is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Why an attempt's `responseExcerpt` is null although the receiver answered. */
export type ExcerptWithheldReason = 'receiver_not_public';

/** What one POST of a delivery came to: the receiver's status (null if none) or why it failed, and its answer. */
export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  responseExcerptWithheld: ExcerptWithheldReason | null;
}

export interface WebhookTransportOptions {
  /** Connections kept open at most, per protocol (the worker's concurrency). */
  maxSockets: number;
  /** One attempt, connection to last byte. */
  timeoutMs: number;
  /** Whether what the receiver at this address answered may be kept (see `WebhookWorkerOptions`). */
  revealsAnswerOf?: (address: string) => boolean;
}

const NO_ANSWER = { responseExcerpt: null, responseExcerptWithheld: null } as const;

const revealsPublicOnly = (address: string): boolean => classifyAddress(address) === 'public';

/**
 * How a delivery reaches its receiver: one signed HTTP POST, over keep-alive agents, through the lookup that
 * refuses private addresses for live endpoints (`webhook-url-policy.ts`), within the schedule's timeout, reading
 * at most 64 KiB of the answer and keeping its first 1 KiB where the receiver is public. It never throws: every
 * failure is an `AttemptOutcome` with `error`. Which delivery to post, and when, is the worker's business.
 *
 * @example
 * const transport = new WebhookTransport({ maxSockets: 64, timeoutMs: 10_000 });
 * const outcome = await transport.post(delivery, body, signature, controller.signal);
 */
export class WebhookTransport {
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;
  private readonly revealsAnswerOf: (address: string) => boolean;
  private readonly lookups: Record<Environment, ReturnType<typeof guardedLookup>> = {
    test: guardedLookup('test'),
    live: guardedLookup('live'),
  };

  constructor(private readonly options: WebhookTransportOptions) {
    this.httpAgent = new HttpAgent({ keepAlive: true, maxSockets: options.maxSockets });
    this.httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: options.maxSockets });
    this.revealsAnswerOf = options.revealsAnswerOf ?? revealsPublicOnly;
  }

  /** Closes the kept-alive connections (the worker stops). */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** Posts `body` with its `signature` to the delivery's endpoint; `signal` aborts the attempt. */
  post(delivery: DueDelivery, body: string, signature: string, signal: AbortSignal): Promise<AttemptOutcome> {
    // Literal addresses never reach the lookup, so they are checked here, on every attempt.
    const checked = checkUrlStatically(delivery.url, delivery.environment);
    if (!checked.ok) return Promise.resolve(failed(`refused: ${checked.message}`));
    const url = checked.url;
    const secure = url.protocol === 'https:';
    const payload = Buffer.from(body);
    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const options = {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: deliveryHeaders(delivery, signature, payload.length),
        ...(isIP(hostOf(url)) === 0 ? { lookup: this.lookups[delivery.environment] } : {}),
      };
      const request = (secure ? httpsRequest : httpRequest)(url, options, (response) =>
        this.readAnswer(response, finish),
      );
      const onAbort = () => request.destroy(new Error('aborted'));
      const timeout = setTimeout(() => {
        request.destroy(new Error(`timed out after ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error) => finish(failed(describeError(error))));
      request.end(payload);
    });
  }

  /** Reads the receiver's answer: its status, and an excerpt where the receiver may be shown back. */
  private readAnswer(response: IncomingMessage, finish: (outcome: AttemptOutcome) => void): void {
    const chunks: Buffer[] = [];
    let kept = 0;
    let total = 0;
    // The address this very answer came from (after DNS and the connect-time check), not the URL's name.
    const revealed = this.revealsAnswerOf(response.socket?.remoteAddress ?? '');
    response.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (revealed && kept < RESPONSE_EXCERPT_BYTES) {
        const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept);
        chunks.push(part);
        kept += part.length;
      }
      if (total > MAX_RESPONSE_BYTES) response.destroy();
    });
    const done = () =>
      finish({
        statusCode: response.statusCode ?? null,
        error: null,
        responseExcerpt: kept === 0 ? null : redact(Buffer.concat(chunks).toString('utf8')),
        responseExcerptWithheld: revealed ? null : 'receiver_not_public',
      });
    response.on('end', done);
    response.on('close', done);
    response.on('error', done);
  }
}

/** The headers of one attempt: the signature, and the event, delivery and attempt it is. */
function deliveryHeaders(delivery: DueDelivery, signature: string, length: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'content-length': String(length),
    'user-agent': 'ServicePay-Webhooks/1.0',
    'x-service-signature': signature,
    'x-service-event-id': delivery.eventId,
    'x-service-event-type': delivery.eventType,
    'x-service-delivery-id': delivery.id,
    'x-service-attempt': String(delivery.attemptCount + 1),
  };
}

/**
 * An attempt that got no answer, with why.
 *
 * @example
 * failed('refused: the URL points at a private address')
 */
export function failed(error: string): AttemptOutcome {
  return { statusCode: null, error, ...NO_ANSWER };
}

/**
 * An error as one line for the attempt's record, with its system code (`ECONNREFUSED: …`) when it has one.
 *
 * @example
 * describeError(Object.assign(new Error('connect failed'), { code: 'ECONNREFUSED' })) // 'ECONNREFUSED: connect failed'
 */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : error.message;
  }
  return String(error);
}
