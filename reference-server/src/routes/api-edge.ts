import type { RequestHandler, Response } from 'express';
import express from 'express';
import { HttpError } from '../errors.ts';
import type { Clock } from '../internal/clock.ts';
import { verifySignature } from '../internal/signature.ts';
import {
  type AuthDeps,
  requireApiKey,
  requireApiKeyOrWidgetToken,
  requireWidgetToken,
} from '../middleware/authenticate.ts';
import { apiCaller, type Caller, callerOf, widgetCaller } from '../middleware/request-context.ts';
import type { Edge } from './mount-operations.ts';
import type { AnyOperation, AuthKind, PortalAuthKind } from './operation.ts';
import type { OperationDeps } from './operation-deps.ts';

/** What the checks in front of the handlers need, beside the handlers' own parts. */
export interface MountDeps {
  auth: AuthDeps;
  /** The checkout's per-address budget, for the keyless routes (`address`). */
  perAddressLimit: RequestHandler;
  /** The bank's notification signature: its secret, the clock, and how old a signature may be. */
  bankSignature: { secret: string; clock: Clock; toleranceSeconds: number };
  handlers: OperationDeps;
}

/** The bank signs at most this much (a notification is a few hundred bytes). */
const BANK_BODY_LIMIT = 64 * 1024;

/** The bank's raw body, its signature checked before a byte of it is parsed; then the JSON in `req.body`. */
function bankSignatureCheck(check: MountDeps['bankSignature']): RequestHandler[] {
  const verify: RequestHandler = (req, _res, next) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const verdict = verifySignature(
      raw,
      req.get('X-Bank-Signature'),
      check.secret,
      Math.floor(check.clock.now() / 1000),
      check.toleranceSeconds,
    );
    if (!verdict.ok)
      throw new HttpError(401, 'invalid_signature', `Bank signature check failed (${verdict.reason}).`);
    try {
      req.body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new HttpError(400, 'malformed_json', 'The notification is not valid JSON.');
    }
    next();
  };
  return [express.raw({ type: () => true, limit: BANK_BODY_LIMIT }), verify];
}

/**
 * The error statuses the checks of each API auth answer, declared beside the checks (`guardsOf`); the document
 * adds them to each operation of that auth. A key or token: malformed (400), missing or unknown (401), refused
 * (403: a publishable key, another session's token), over its budget (429). The bank's signature: its raw
 * body over 64 KiB (413), the signature (401), not JSON (400).
 */
export const API_GUARD_STATUSES: Record<Exclude<AuthKind, PortalAuthKind>, readonly number[]> = {
  none: [],
  address: [429],
  secretKey: [400, 401, 403, 429],
  secretOrPublishableKey: [400, 401, 403, 429],
  widgetToken: [400, 401, 403, 429],
  secretKeyOrWidgetToken: [400, 401, 403, 429],
  bankSignature: [400, 401, 413],
};

/** The checks `auth` puts in front of a handler (their statuses: `API_GUARD_STATUSES`). */
function guardsOf(kind: AuthKind, deps: MountDeps): RequestHandler[] {
  switch (kind) {
    case 'none':
      return [];
    case 'address':
      return [deps.perAddressLimit];
    case 'secretKey':
      return [requireApiKey(deps.auth)];
    case 'secretOrPublishableKey':
      return [requireApiKey(deps.auth, { allowPublishable: true })];
    case 'widgetToken':
      return [requireWidgetToken(deps.auth)];
    case 'secretKeyOrWidgetToken':
      return [requireApiKeyOrWidgetToken(deps.auth)];
    case 'bankSignature':
      return bankSignatureCheck(deps.bankSignature);
    default:
      throw new Error(`${kind} is not an auth of the API`);
  }
}

/** The caller `auth` promises the handler, as the guards left it (a guard that left none is a wiring fault). */
function callerFor(kind: AuthKind, res: Response): Caller | undefined {
  switch (kind) {
    case 'secretKey':
    case 'secretOrPublishableKey':
      return apiCaller(res);
    case 'widgetToken':
      return widgetCaller(res);
    case 'secretKeyOrWidgetToken': {
      const caller = callerOf(res);
      if (caller === undefined) throw new Error('no credential authenticated this request');
      return caller;
    }
    default:
      return undefined;
  }
}

/**
 * How the API's tables are mounted: the checks of each operation's `auth` (keys, widget tokens, the bank's
 * signature, the checkout's per-address budget) and the caller they leave.
 *
 * @example
 * mountOperations(app, API_OPERATIONS, apiEdge(deps));
 */
export function apiEdge(deps: MountDeps): Edge<OperationDeps> {
  return {
    guards: (operation: AnyOperation) => guardsOf(operation.auth, deps),
    callerOf: (operation: AnyOperation, res: Response) => callerFor(operation.auth, res),
    handlers: deps.handlers,
  };
}
