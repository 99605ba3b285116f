import type { Express, Request, RequestHandler, Response } from 'express';
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
import { validationError } from '../middleware/error-handler.ts';
import { afterWrite, idempotent, idempotentWrite } from '../middleware/idempotency.ts';
import {
  apiCaller,
  type Caller,
  callerOf,
  requestIdOf,
  widgetCaller,
} from '../middleware/request-context.ts';
import { sendData, sendJsonText, sendPage } from './envelope.ts';
import type { Answer, AnyOperation, AuthKind, OperationDeps } from './operation.ts';

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

/** The checks `auth` puts in front of a handler. */
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
  }
}

/** Sends what a handler answered (nothing when it answered by itself). */
function send(res: Response, answer: Answer): void {
  if (answer === undefined) return;
  if ('page' in answer) sendPage(res, answer.page);
  else if ('text' in answer) sendJsonText(res, answer.status, answer.text);
  else if ('document' in answer) res.json(answer.document);
  else sendData(res, answer.data, answer.status);
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

/** Checks the request against the operation's schemas, then runs its handler and sends its answer. */
function handlerOf(operation: AnyOperation, deps: OperationDeps): RequestHandler {
  const run = async (req: Request, res: Response) => {
    // Each entry typed its own context (`defineOperation`); the table holds them all as `AnyOperation`, so the
    // context built here, checked at run time by `callerFor` and the schemas, is handed on untyped.
    const caller = callerFor(operation.auth, res);
    operation.admit?.(caller as never, deps);
    let query: unknown;
    if (operation.query) {
      const parsed = operation.query.safeParse(req.query);
      if (!parsed.success) throw validationError(parsed.error, 'query');
      query = parsed.data;
    }
    // An `unread` body (the `{}` the SDK sends) is not read: the handler gets the empty object it documents.
    let body: unknown = operation.body?.absent === 'unread' ? {} : undefined;
    const spec = operation.body;
    if (spec && spec.absent !== 'unread') {
      const parsed = spec.schema.safeParse(spec.absent === 'empty-object' ? (req.body ?? {}) : req.body);
      if (!parsed.success) throw validationError(parsed.error, spec.what);
      body = parsed.data;
    }
    const context = {
      caller,
      params: req.params,
      query,
      body,
      requestId: requestIdOf(res) ?? '',
      req,
      res,
    };
    send(res, await operation.handler(context as never, deps));
  };
  // Remembered in its write job: a failure (its body invalid too) is answered from an earlier request with the
  // same key when there is one (`afterWrite`).
  if (operation.idempotency === 'in-write') return (req, res) => afterWrite(res, () => run(req, res));
  return run;
}

/** `{id}` as express writes it (`:id`). */
const expressPath = (path: string): string => path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');

/**
 * Mounts each operation on `app`: its method and path, the checks of its `auth`, its `Idempotency-Key`
 * handling, the validation of its query and body, then its handler. The only way an operation of the API is
 * routed; the OpenAPI document is generated from the same entries (`openapi/openapi-document.ts`).
 *
 * @example
 * mountOperations(app, API_OPERATIONS.filter((operation) => operation.auth !== 'bankSignature'), deps);
 */
export function mountOperations(app: Express, operations: readonly AnyOperation[], deps: MountDeps): void {
  // A HEAD of its own is mounted before the GET of its path, which express would otherwise give it.
  const headsFirst = [...operations].sort(
    (a, b) => Number(b.method === 'head') - Number(a.method === 'head'),
  );
  for (const operation of headsFirst) {
    const idempotency =
      operation.idempotency === 'replay'
        ? [idempotent]
        : operation.idempotency === 'in-write'
          ? [idempotentWrite]
          : [];
    app[operation.method](
      expressPath(operation.path),
      ...guardsOf(operation.auth, deps),
      ...idempotency,
      handlerOf(operation, deps.handlers),
    );
  }
}
