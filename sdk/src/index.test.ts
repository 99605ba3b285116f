import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  type CreatedSession,
  type CreateSessionParams,
  constructEvent,
  constructEventAsync,
  type DeletedWebhookEndpoint,
  type ExportFile,
  type ExportParams,
  ExportPromise,
  type ExportStream,
  generateTestHeader,
  InvalidRequestError,
  NotFoundError,
  type Page,
  type PagePromise,
  PermissionError,
  RateLimitError,
  type RequestOptions,
  type ResendEventResult,
  type ResponseInfo,
  ServicePay,
  ServicePayError,
  type ServicePayErrorCode,
  type ServicePayOptions,
  type Session,
  SignatureVerificationError,
  type SimulatedTransfer,
  TimeoutError,
  type UnknownWebhookEvent,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  type WebhookEvent,
} from '@servicepay/node';
import { SessionSchema } from '@servicepay/node/protocol';
import { Agent, type Dispatcher } from 'undici';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { VERSION } from './internal/version.ts';

const client = new ServicePay(`sk_test_${'a'.repeat(32)}`);

describe('the public API (types)', () => {
  it('takes a key and options with an undici dispatcher', () => {
    expectTypeOf(ServicePay).constructorParameters.toEqualTypeOf<[string?, ServicePayOptions?]>();
    expectTypeOf<ServicePayOptions['dispatcher']>().toEqualTypeOf<Dispatcher | undefined>();
    expectTypeOf(new Agent()).toExtend<NonNullable<ServicePayOptions['dispatcher']>>();
    expectTypeOf<ServicePayOptions>().toHaveProperty('baseUrl');
    expectTypeOf<ServicePayOptions>().toHaveProperty('timeout');
    expectTypeOf<ServicePayOptions>().toHaveProperty('maxRetries');
    expectTypeOf(client.environment).toEqualTypeOf<'test' | 'live'>();
  });

  it('types every resource method', () => {
    expectTypeOf(client.sessions.create).parameters.toEqualTypeOf<[CreateSessionParams, RequestOptions?]>();
    expectTypeOf(client.sessions.create).returns.resolves.toEqualTypeOf<CreatedSession>();
    expectTypeOf(client.sessions.retrieve).returns.resolves.toEqualTypeOf<Session>();
    expectTypeOf(client.sessions.cancel).returns.resolves.toEqualTypeOf<Session>();
    expectTypeOf(client.sessions.list).returns.toEqualTypeOf<PagePromise<Session>>();
    expectTypeOf(client.sessions.list).returns.resolves.toEqualTypeOf<Page<Session>>();
    expectTypeOf<Parameters<typeof client.sessions.list>[0]>().toExtend<{ limit?: number } | undefined>();
    expectTypeOf(client.webhookEndpoints.create).returns.resolves.toEqualTypeOf<WebhookEndpointWithSecret>();
    expectTypeOf(client.webhookEndpoints.retrieve).returns.resolves.toEqualTypeOf<WebhookEndpoint>();
    expectTypeOf(client.webhookEndpoints.update).returns.resolves.toEqualTypeOf<WebhookEndpoint>();
    expectTypeOf(client.webhookEndpoints.delete).returns.resolves.toEqualTypeOf<DeletedWebhookEndpoint>();
    expectTypeOf(
      client.webhookEndpoints.rollSecret,
    ).returns.resolves.toEqualTypeOf<WebhookEndpointWithSecret>();
    expectTypeOf(client.webhookEndpoints.list).returns.toEqualTypeOf<PagePromise<WebhookEndpoint>>();
    expectTypeOf(client.webhookEndpoints.deliveries).returns.toEqualTypeOf<PagePromise<WebhookDelivery>>();
    expectTypeOf(client.events.resend).returns.resolves.toEqualTypeOf<ResendEventResult>();
    expectTypeOf(client.testHelpers.simulateTransfer).returns.resolves.toEqualTypeOf<SimulatedTransfer>();
  });

  it('types the exports: a promise of a Node Readable (thrown errors before it), a file writer, the range', () => {
    expectTypeOf(client.exports.balanceTransactions).parameters.toEqualTypeOf<
      [ExportParams?, RequestOptions?]
    >();
    expectTypeOf(client.exports.sessions).returns.toEqualTypeOf<ExportPromise>();
    expectTypeOf(client.exports.sessions).returns.resolves.toEqualTypeOf<ExportStream>();
    expectTypeOf<ExportStream>().toExtend<Readable>();
    expectTypeOf<ExportStream['filename']>().toEqualTypeOf<string | null>();
    // Types only: calling the methods here would send a request.
    expectTypeOf<ExportPromise['toFile']>().returns.resolves.toEqualTypeOf<ExportFile>();
    expectTypeOf<ReturnType<ExportPromise['withResponse']>>().resolves.toEqualTypeOf<{
      data: ExportStream;
      response: ResponseInfo;
    }>();
    expectTypeOf(client.exports.sessions).toBeCallableWith({
      createdFrom: new Date(),
      createdTo: '2026-12-02',
    });
    // @ts-expect-error a range bound is a string or a Date, not epoch milliseconds
    expectTypeOf(client.exports.sessions).toBeCallableWith({ createdFrom: 1_764_547_200_000 });
    // @ts-expect-error the environment is test or live
    expectTypeOf(client.exports.balanceTransactions).toBeCallableWith({ environment: 'production' });
    expect(client.exports.sessions).toBeTypeOf('function');
    expect(ExportPromise.prototype.toFile).toBeTypeOf('function');
  });

  it('makes a list for-await-able as items and awaitable as a page', () => {
    expectTypeOf(client.sessions.list()).toExtend<AsyncIterable<Session>>();
    expectTypeOf(client.sessions.list()).toExtend<PromiseLike<Page<Session>>>();
    expectTypeOf<Page<Session>>().toExtend<AsyncIterable<Session>>();
    expectTypeOf<Page<Session>['data']>().toEqualTypeOf<readonly Session[]>();
  });

  it('rejects wrong input at compile time', () => {
    const amountAsText = { amount: '5000', currency: 'NGN', payer: { name: 'A', email: 'a@b.c' } };
    // @ts-expect-error amount is a number of minor units
    expectTypeOf(client.sessions.create).toBeCallableWith(amountAsText);
    // @ts-expect-error the status filter is one of the session statuses
    expectTypeOf(client.sessions.list).toBeCallableWith({ status: 'paid' });
  });

  it('types webhook verification', () => {
    expectTypeOf(constructEvent).returns.toEqualTypeOf<WebhookEvent>();
    expectTypeOf(constructEventAsync).returns.resolves.toEqualTypeOf<WebhookEvent>();
    expectTypeOf(constructEvent).toBeCallableWith('{}', 'header', ['whsec_a', 'whsec_b'], { tolerance: 60 });
    expectTypeOf(constructEvent).toBeCallableWith(Buffer.from('{}'), undefined, 'whsec_a');
    // @ts-expect-error a parsed body is not accepted
    expectTypeOf(constructEvent).toBeCallableWith({ id: 'evt_1' }, 'header', 'whsec_a');
    expectTypeOf(generateTestHeader).returns.toEqualTypeOf<string>();
    expectTypeOf(client.webhooks.constructEvent).returns.toEqualTypeOf<WebhookEvent>();
  });

  it('narrows a webhook event by its type, keeping an unknown type as its own member', () => {
    const event = {} as WebhookEvent;
    if (event.type === 'session.successful') {
      expectTypeOf(event.data.session.reference).toEqualTypeOf<string>();
      expectTypeOf(event.type).toEqualTypeOf<'session.successful'>();
    }
    switch (event.type) {
      case 'session.successful':
      case 'session.mismatch':
      case 'session.expired':
      case 'session.cancelled':
      case 'session.credit_unapplied':
      case 'refund.succeeded':
      case 'refund.failed':
        expectTypeOf(event.data.session.status).toExtend<string>();
        break;
      default:
        expectTypeOf(event).toEqualTypeOf<UnknownWebhookEvent>();
        expectTypeOf(String(event.type)).toEqualTypeOf<string>();
    }
    // @ts-expect-error a misspelt type is caught at compile time
    expectTypeOf(event.type === 'session.sucessful').toBeBoolean();
  });

  it('types statuses leniently: known values complete, later ones are strings', () => {
    expectTypeOf<Session['status']>().toExtend<string>();
    expectTypeOf<'successful'>().toExtend<Session['status']>();
    expectTypeOf<'refunded'>().toExtend<Session['status']>();
  });

  it('gives the response of a success with withResponse()', () => {
    expectTypeOf(client.sessions.retrieve('ses_1').withResponse()).resolves.toEqualTypeOf<{
      data: Session;
      response: ResponseInfo;
    }>();
    expectTypeOf<ResponseInfo['requestId']>().toEqualTypeOf<string | null>();
  });

  it('gives every error statusCode, code, requestId and message', () => {
    expectTypeOf<ServicePayError['statusCode']>().toEqualTypeOf<number | null>();
    expectTypeOf<ServicePayError['requestId']>().toEqualTypeOf<string | null>();
    expectTypeOf<ServicePayError['code']>().toEqualTypeOf<ServicePayErrorCode>();
    expectTypeOf<'rate_limited'>().toExtend<ServicePayErrorCode>();
    expectTypeOf<ServicePayError['message']>().toEqualTypeOf<string>();
    expectTypeOf<RateLimitError['retryAfter']>().toEqualTypeOf<number | null>();
    expectTypeOf<InvalidRequestError['errors']>().toEqualTypeOf<
      readonly { path: string; message: string }[]
    >();
  });
});

describe('the public API (runtime)', () => {
  it('exports one error class per case, all ServicePayErrors', () => {
    for (const ErrorClass of [
      AuthenticationError,
      PermissionError,
      RateLimitError,
      InvalidRequestError,
      NotFoundError,
      ConflictError,
      APIError,
      ConnectionError,
      TimeoutError,
      SignatureVerificationError,
    ]) {
      const error = new ErrorClass({ code: 'internal_error', message: 'x' });
      expect(error).toBeInstanceOf(ServicePayError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(ErrorClass.name);
    }
  });

  it('keeps the cause', () => {
    const cause = new Error('socket');
    expect(new ConnectionError({ code: 'connection_error', message: 'x', cause }).cause).toBe(cause);
  });

  it('serves the contract at @servicepay/node/protocol', () => {
    expect(SessionSchema.shape.status).toBeDefined();
  });

  it('does not show the secret key when the client is logged', async () => {
    const { inspect } = await import('node:util');
    expect(inspect(client, { depth: 10 })).not.toContain('sk_test_');
    expect(JSON.stringify(client)).not.toContain('sk_test_');
  });

  it('sends the version that package.json declares', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
  });
});
