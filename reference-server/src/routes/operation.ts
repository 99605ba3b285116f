import type { Request, Response } from 'express';
import { z } from 'zod';
import type { ApiCaller } from '../businesses/ownership.ts';
import type { PortalContext } from '../businesses/portal-sessions.ts';
import type { WidgetCaller } from '../middleware/authenticate.ts';
import type { SuccessStatus } from '../middleware/envelope.ts';
import type { FormSpec } from './form-spec.ts';
import type { OperationDeps } from './operation-deps.ts';
import type { PortalServices } from './portal-deps.ts';

/**
 * Who may call an operation, and so which checks run before its handler (`mountOperations` adds them; the
 * document's `security` is derived from it):
 *
 * - `none`: anyone, no budget (health, this document).
 * - `address`: anyone, spending the calling address's checkout budget (bootstrap, the bank's counter).
 * - `secretKey`: a business's secret key, spending its budget; `secretOrPublishableKey` also takes the
 *   publishable key (on the address's budget).
 * - `widgetToken`: the widget token of the session in the path; `secretKeyOrWidgetToken`: either (cancel).
 * - `bankSignature`: the bank's `X-Bank-Signature` over the raw body, checked before the body is parsed.
 *
 * The developer portal's (`PortalAuthKind`; `portalRoutes` adds their checks, and its form posts are same
 * origin and url-encoded):
 *
 * - `portalPublic`: anyone. The stylesheet and script, the entry redirect, the sign-in page. Reads no
 *   environment's data.
 * - `portalSignIn`: the sign-in form, with the double-submit token of the sign-in cookie (the key is checked by
 *   its handler).
 * - `portalSession`: a signed-in page (`GET`) or form (`POST`, with the session's CSRF token). Every one is held
 *   to the session's environment, the environment of the key that signed in: a request naming another
 *   environment is refused before its handler runs, and the handler reads and changes that environment only.
 */
export type AuthKind =
  | 'none'
  | 'address'
  | 'secretKey'
  | 'secretOrPublishableKey'
  | 'widgetToken'
  | 'secretKeyOrWidgetToken'
  | 'bankSignature'
  | PortalAuthKind;

/** Who may use a page or form of the developer portal (see `AuthKind`). */
export type PortalAuthKind = 'portalPublic' | 'portalSignIn' | 'portalSession';

/** The caller a handler receives, by its operation's `auth`. */
export type CallerOf<A extends AuthKind> = A extends 'secretKey' | 'secretOrPublishableKey'
  ? ApiCaller
  : A extends 'widgetToken'
    ? WidgetCaller
    : A extends 'secretKeyOrWidgetToken'
      ? ApiCaller | WidgetCaller
      : A extends 'portalSession'
        ? PortalContext
        : undefined;

/**
 * Whether `auth` is one of the portal's (its operations answer in HTML and read their own forms).
 *
 * @example
 * isPortalAuth('portalSession'); // true
 */
export const isPortalAuth = (auth: AuthKind): auth is PortalAuthKind => auth.startsWith('portal');

/** What a handler is given beside its request: the API's services, or the portal's. */
export type DepsOf<A extends AuthKind> = A extends PortalAuthKind ? PortalServices : OperationDeps;

/** The names of a path's parameters: `'/api/refunds/{id}'` has `'id'`. */
export type PathParams<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? Name | PathParams<Rest>
  : never;

/** A security scheme of the document; several on one operation are alternatives. */
export type SecurityName = 'secretKey' | 'publishableKey' | 'widgetToken' | 'bankSignature' | 'portalSession';

/**
 * A success answer: `data` in the envelope (`list`: an array with pagination), or a page, a redirect, a stream,
 * a CSV download (`text/csv` with `Content-Disposition: attachment`).
 */
export type SuccessSpec<S extends z.ZodType = z.ZodType> =
  | { kind: 'json'; description: string; data: S; name: string; list?: boolean }
  | { kind: 'html'; description: string }
  | { kind: 'redirect'; description: string }
  | { kind: 'event-stream'; description: string }
  | { kind: 'stream-head'; description: string }
  | { kind: 'asset'; description: string }
  | { kind: 'svg'; description: string }
  | { kind: 'csv'; description: string };

/** A request header an operation reads, as documented. */
export interface HeaderSpec {
  name: string;
  description: string;
  required: boolean;
  schema: Record<string, unknown>;
}

/** A JSON request body: its schema, its name in `components.schemas`, and the noun its validation errors use. */
export interface BodySpec<B extends z.ZodType = z.ZodType> {
  schema: B;
  name: string;
  /** Whether the document says a body must be sent. */
  required: boolean;
  /** "The {what} has invalid fields." */
  what?: string;
  /**
   * How an absent body is checked: as `{}` (`'empty-object'`: every required field is named), or as nothing
   * (`'as-sent'`, one error on the body itself). `'unread'`: the body is documented (the SDK sends `{}`) and
   * never read.
   */
  absent: 'empty-object' | 'as-sent' | 'unread';
}

/** Every part of an operation but its handler: what the document is generated from. */
export interface DocumentedOperation {
  method: 'get' | 'head' | 'post' | 'patch' | 'delete';
  /** OpenAPI path, `{id}` for parameters (mounted as express's `:id`). */
  path: string;
  operationId: string;
  tag:
    | 'Sessions'
    | 'Refunds'
    | 'Balance'
    | 'PaymentLinks'
    | 'Checkout'
    | 'Webhooks'
    | 'Bank'
    | 'Testing'
    | 'Service'
    | 'Portal'
    | 'Exports';
  summary: string;
  description?: string;
  security: SecurityName[];
  query?: z.ZodObject;
  body?: BodySpec;
  /** A portal form (`application/x-www-form-urlencoded`): its schema. */
  form?: z.ZodObject;
  /** What an invalid form answers instead of the 400 (`FormSpec.invalidStatuses`), when its hook says. */
  formInvalidStatuses?: readonly number[];
  /** Request headers the operation reads (`Idempotency-Key` is added from `idempotency`). */
  headers?: HeaderSpec[];
  /** `Idempotency-Key` replays: `replay` (the `idempotent` middleware) or `in-write` (remembered in the job). */
  idempotency?: 'replay' | 'in-write';
  success: Record<number, SuccessSpec>;
  /**
   * Error statuses the handler answers itself (in the error envelope, or as a page for the portal). Those of
   * the checks in front of it are declared where they are mounted: its auth's guards (`API_GUARD_STATUSES`,
   * `portalGuardStatuses`), the validation of its query and body (`VALIDATION_STATUS`), the app's middleware
   * (`APP_CHECKS`); the document adds them.
   */
  errors: number[];
  /** Who may call it (its `security` follows from it). */
  auth: AuthKind;
  /**
   * Reads its body itself (the bank's signed bytes, a portal form) or none (health, this document): mounted
   * before the JSON body parser, so never answers its 400/415. Every portal page does.
   */
  readsOwnBody?: boolean;
  /** `false`: never reads the database (this document, liveness, the portal's assets), so never answers its 503. */
  readsDatabase?: false;
}

/** What a handler receives: its request, checked against its operation's schemas, and who sent it. */
export interface OperationContext<A extends AuthKind, P extends string, Q, B> {
  caller: CallerOf<A>;
  params: Record<PathParams<P>, string>;
  query: Q;
  body: B;
  requestId: string;
  /** For the few handlers that answer by themselves (the stream, health): otherwise left alone. */
  req: Request;
  res: Response;
}

/**
 * What a handler answers: `data` in the envelope (`status` 200 unless said), a page of a list, text already
 * in the envelope (an answer remembered in its write job is sent as remembered), a document as it is, or
 * nothing when the handler answered by itself (the push stream).
 */
export type Answer =
  | { status?: SuccessStatus; data: unknown }
  | { page: { data: unknown[]; pagination: unknown } }
  | { status: SuccessStatus; text: string }
  | { document: unknown }
  | undefined;

/** What the JSON answers of `R` carry in `data` (a list's items for a list), as their schemas give it out. */
type DataOf<R> = {
  [K in keyof R]: R[K] extends { kind: 'json'; data: infer S extends z.ZodType } ? z.output<S> : never;
}[keyof R];

/**
 * An answer whose `data` is what one of the operation's documented JSON answers holds, with one of its
 * documented statuses (200 when none is named).
 */
export type AnswerOf<R> =
  | { status?: Extract<keyof R, SuccessStatus>; data: DataOf<R> }
  | { page: { data: DataOf<R>[]; pagination: unknown } }
  | { status: Extract<keyof R, SuccessStatus>; text: string }
  | { document: unknown }
  | undefined;

/** Any value but a promise (an answer must be awaited before it is sent). */
type Settled<T> = T extends PromiseLike<unknown> ? never : T;

/** One operation: its description and its handler, declared together. */
export interface Operation<
  A extends AuthKind = AuthKind,
  P extends string = string,
  Q extends z.ZodObject | undefined = z.ZodObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  R extends Record<number, SuccessSpec> = Record<number, SuccessSpec>,
  I extends string = string,
> extends Omit<
    DocumentedOperation,
    'security' | 'query' | 'body' | 'form' | 'path' | 'success' | 'operationId'
  > {
  operationId: I;
  path: P;
  success: R;
  auth: A;
  query?: Q;
  /** A JSON body (the API's); a portal form takes `form`. */
  body?: B extends z.ZodType ? BodySpec<B> : undefined;
  form?: B extends z.ZodType
    ? FormSpec<
        B,
        OperationContext<A, P, Q extends z.ZodObject ? z.output<Q> : undefined, undefined>,
        DepsOf<A>
      >
    : undefined;
  /**
   * A refusal that does not depend on what was sent, made after `auth` and before the query and body are
   * validated (a live key on a test helper, the bank's counter when closed): throws to refuse.
   */
  admit?: (caller: CallerOf<A>, deps: DepsOf<A>) => void;
  /** Answers with what it returns, or by itself through `res` (a page, a redirect, the stream), returning nothing. */
  handler: (
    context: OperationContext<
      A,
      P,
      Q extends z.ZodObject ? z.output<Q> : undefined,
      B extends z.ZodType ? z.output<B> : undefined
    >,
    deps: DepsOf<A>,
    // biome-ignore lint/suspicious/noConfusingVoidType: a page's handler answers through `res` and returns nothing.
  ) => Promise<Settled<AnswerOf<R>> | void> | Settled<AnswerOf<R>> | void;
}

/** An operation of any shape, as the table holds it. */
// biome-ignore lint/suspicious/noExplicitAny: the table holds operations of every shape; each was checked where it was defined.
export type AnyOperation = Operation<AuthKind, string, any, any, any, string>;

/**
 * Declares one operation, typing its handler's context from its `auth`, `path`, `query` and `body` (as hono's
 * `createRoute` with `app.openapi(route, handler)` does, on express).
 *
 * @example
 * export const retrieveRefund = defineOperation({
 *   method: 'get', path: '/api/refunds/{id}', operationId: 'retrieveRefund', tag: 'Refunds',
 *   summary: 'Retrieve a refund', auth: 'secretKey',
 *   success: { 200: json('The refund.', RefundSchema, 'Refund') }, errors: [404],
 *   handler: async ({ caller, params }, { refunds }) => ({ data: await refunds.retrieve(caller, params.id) }),
 * });
 */
export function defineOperation<
  A extends AuthKind,
  const P extends string,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  const R extends Record<number, SuccessSpec> = Record<number, SuccessSpec>,
  const I extends string = string,
>(operation: Operation<A, P, Q, B, R, I>): Operation<A, P, Q, B, R, I> {
  return operation;
}

/** The document's security schemes for each kind of auth (alternatives, in the document's order). */
export const SECURITY_OF: Record<AuthKind, SecurityName[]> = {
  none: [],
  address: [],
  secretKey: ['secretKey'],
  secretOrPublishableKey: ['publishableKey', 'secretKey'],
  widgetToken: ['widgetToken'],
  secretKeyOrWidgetToken: ['secretKey', 'widgetToken'],
  bankSignature: ['bankSignature'],
  portalPublic: [],
  portalSignIn: [],
  portalSession: ['portalSession'],
};

/**
 * An operation as the document describes it (its `security` from its `auth`).
 *
 * @example
 * describeOperation(retrieveRefund).security; // ['secretKey']
 */
export function describeOperation(operation: AnyOperation): DocumentedOperation {
  const { handler: _handler, admit: _admit, form, ...described } = operation;
  return {
    ...described,
    ...(form ? { form: form.schema } : {}),
    ...(form?.invalidStatuses ? { formInvalidStatuses: form.invalidStatuses } : {}),
    security: SECURITY_OF[operation.auth],
    readsOwnBody: operation.readsOwnBody ?? isPortalAuth(operation.auth),
  } as DocumentedOperation;
}

/**
 * A JSON success answer as the document describes it.
 *
 * @example
 * success: { 200: json('The refund.', RefundSchema, 'Refund') }
 */
export const json = <S extends z.ZodType>(
  description: string,
  data: S,
  name: string,
  list = false,
): { kind: 'json'; description: string; data: S; name: string; list?: boolean } => ({
  kind: 'json',
  description,
  data,
  name,
  ...(list ? { list } : {}),
});

/**
 * A page of the portal as the document describes it (`text/html`).
 *
 * @example
 * success: { 200: htmlPage('The endpoints.'), 303: seeOther('Not signed in.') }
 */
export const htmlPage = (description: string): { kind: 'html'; description: string } => ({
  kind: 'html',
  description,
});

/** A `303 See Other` of the portal (to the next page, after a form), as the document describes it. */
export const seeOther = (description: string): { kind: 'redirect'; description: string } => ({
  kind: 'redirect',
  description,
});

/**
 * The body the SDK sends on a POST that takes no parameters (cancel, new account, roll secret, the test
 * helpers): `{}` with `Content-Type: application/json`. Optional: the same POST without a body is taken too.
 *
 * @example
 * EmptyBodySchema.parse({});
 */
export const EmptyBodySchema = z.object({}).strict();

/** The optional `{}` the SDK sends on a POST without parameters (`EmptyBodySchema`), never read. */
export const emptyBody: BodySpec<typeof EmptyBodySchema> = {
  schema: EmptyBodySchema,
  name: 'EmptyBody',
  required: false,
  absent: 'unread',
};
