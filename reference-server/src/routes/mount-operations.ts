import type { Request, RequestHandler, Response, Router } from 'express';
import { validationError } from '../middleware/classify-error.ts';
import { sendData, sendJsonText, sendList } from '../middleware/envelope.ts';
import { afterWrite, idempotent, idempotentWrite } from '../middleware/idempotency.ts';
import { requestIdOf } from '../middleware/request-context.ts';
import type { Answer, AnyOperation } from './operation.ts';

/**
 * How a table of operations is mounted: the checks each operation's `auth` puts in front of its handler, the
 * caller they leave for it, and what its handler is given (`apiEdge` for the API's, `portalEdge` for the
 * portal's).
 */
export interface Edge<D = unknown> {
  guards: (operation: AnyOperation) => RequestHandler[];
  callerOf: (operation: AnyOperation, res: Response) => unknown;
  handlers: D;
}

/**
 * The statuses the validation of an operation's query, body or form answers (400 `validation_failed`, naming
 * each field, or what a form's `invalid` hook answers instead: `formInvalidStatuses`), when it has one to
 * validate; the document adds them.
 *
 * @example
 * validationStatuses(createSession); // [400]
 */
export const validationStatuses = (operation: {
  query?: unknown;
  body?: { absent: string } | undefined;
  form?: unknown;
  formInvalidStatuses?: readonly number[] | undefined;
}): readonly number[] => {
  const statuses = new Set<number>();
  if (operation.query || (operation.body && operation.body.absent !== 'unread')) statuses.add(400);
  if (operation.form) for (const status of operation.formInvalidStatuses ?? [400]) statuses.add(status);
  return [...statuses];
};

/** Sends what a handler answered (nothing when it answered by itself). */
function send(res: Response, answer: Answer): void {
  if (answer === undefined) return;
  if ('page' in answer) sendList(res, answer.page);
  else if ('text' in answer) sendJsonText(res, answer.status, answer.text);
  else if ('document' in answer) res.json(answer.document);
  else sendData(res, answer.data, answer.status);
}

/** Checks the request against the operation's schemas, then runs its handler and sends its answer. */
function handlerOf(operation: AnyOperation, edge: Edge): RequestHandler {
  const deps = edge.handlers;
  const run = async (req: Request, res: Response) => {
    // Each entry typed its own context (`defineOperation`); the table holds them all as `AnyOperation`, so the
    // context built here, checked at run time by the edge's `callerOf` and the schemas, is handed on untyped.
    const caller = edge.callerOf(operation, res);
    operation.admit?.(caller as never, deps as never);
    let query: unknown;
    if (operation.query) {
      const parsed = operation.query.safeParse(req.query);
      if (!parsed.success) throw validationError(parsed.error, 'query');
      query = parsed.data;
    }
    // An `unread` body (the `{}` the SDK sends) is not read: the handler gets the empty object it documents.
    const context = {
      caller,
      params: req.params,
      query,
      body: (operation.body?.absent === 'unread' ? {} : undefined) as unknown,
      requestId: requestIdOf(res) ?? '',
      req,
      res,
    };
    const spec = operation.body;
    if (spec && spec.absent !== 'unread') {
      const parsed = spec.schema.safeParse(spec.absent === 'empty-object' ? (req.body ?? {}) : req.body);
      if (!parsed.success) throw validationError(parsed.error, spec.what);
      context.body = parsed.data;
    }
    const form = operation.form;
    if (form) {
      const parsed = form.schema.safeParse(req.body ?? {});
      if (!parsed.success) {
        if (form.invalid) return form.invalid(parsed.error, context as never, deps as never);
        throw validationError(parsed.error, 'form');
      }
      context.body = parsed.data;
    }
    send(res, (await operation.handler(context as never, deps as never)) ?? undefined);
  };
  // Remembered in its write job: a failure (its body invalid too) is answered from an earlier request with the
  // same key when there is one (`afterWrite`).
  if (operation.idempotency === 'in-write') return (req, res) => afterWrite(res, () => run(req, res));
  return run;
}

/** `{id}` as express writes it (`:id`), under `base` (where the router is mounted). */
const expressPath = (path: string, base: string): string =>
  path.slice(base.length).replace(/\{([A-Za-z0-9_]+)\}/g, ':$1') || '/';

/**
 * Mounts each operation on `app`: its method and path, the checks of its `auth`, its `Idempotency-Key`
 * handling, the validation of its query and body (or form), then its handler. The only way an operation of the
 * API or a page of the portal is routed; the OpenAPI document is generated from the same entries
 * (`openapi/openapi-document.ts`). `base`: the path `app` (a router) is mounted at, left out of its routes.
 *
 * @example
 * mountOperations(app, API_OPERATIONS.filter((operation) => operation.auth !== 'bankSignature'), apiEdge(deps));
 * mountOperations(portalRouter, PORTAL_OPERATIONS, portalEdge(services), '/portal');
 */
export function mountOperations(
  app: Router,
  operations: readonly AnyOperation[],
  edge: Edge,
  base = '',
): void {
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
      expressPath(operation.path, base),
      ...edge.guards(operation),
      ...idempotency,
      handlerOf(operation, edge),
    );
  }
}
