import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ServicePay } from '@servicepay/node';
import type { CreatedBusiness } from '@servicepay/node/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../reference-server/src/openapi/openapi-document.ts';
import { startReceiver } from '../support/checkout.ts';
import { ROOT, type RunningProcess, startProcess } from '../support/child-process.ts';
import { type RunningServer, startServer } from '../support/server.ts';

// Issue 27: the generated OpenAPI document checked by the tools an API team runs in CI, each CLI spawned once:
// Redocly's recommended lint, Spectral with its OpenAPI rules and the OWASP API Security ruleset, and the SDK
// walking the service through Stoplight Prism's validating proxy (`--errors`), which answers an error for any
// request or response the document does not describe. Each linter also lints a copy of the document written
// the way it was before issue 27, so the check is seen to refuse what it should.

const run = promisify(execFile);
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
const HERE = join(ROOT, 'test', 'openapi-tools');

type Json = Record<string, unknown>;
type Document = ReturnType<typeof buildOpenApiDocument>;

let dir: string;
let documentFile: string;
let oldShapeFile: string;
let server: RunningServer;

/** The document as it was before issue 27: the webhook's signature a parameter, a 429 without RateLimit-*. */
function oldShape(document: Document): Json {
  const copy = structuredClone(document) as unknown as {
    webhooks: { sessionEvent: { post: Json & { parameters: Json[] } } };
    paths: Record<string, Record<string, { responses: Record<string, { headers?: Json }> }>>;
  };
  const webhook = copy.webhooks.sessionEvent.post;
  delete webhook.security;
  delete webhook.operationId;
  webhook.parameters.unshift({
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    schema: { type: 'string' },
  });
  const limited = copy.paths['/api/widget/sessions']?.post?.responses['429'];
  if (limited) limited.headers = { 'Retry-After': { schema: { type: 'integer' } } };
  // One path is enough to show the rule at work, and keeps the second lint short.
  copy.paths = { '/api/widget/sessions': copy.paths['/api/widget/sessions'] ?? {} };
  return copy as unknown as Json;
}

beforeAll(async () => {
  // Inside this folder, so the Spectral ruleset's per-path overrides (globs relative to it) reach the files.
  dir = mkdtempSync(join(HERE, 'lint-'));
  mkdirSync(join(dir, 'old'));
  documentFile = join(dir, 'openapi.json');
  oldShapeFile = join(dir, 'old', 'openapi.json');
  const document = buildOpenApiDocument();
  writeFileSync(documentFile, JSON.stringify(document, null, 2));
  writeFileSync(oldShapeFile, JSON.stringify(oldShape(document), null, 2));
  server = await startServer({ rateLimit: { perMinute: 10_000 } });
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs a CLI to its end, whatever its exit code (a linter exits 1 when it finds errors). */
async function cli(command: string, args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(bin(command), args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('linters', () => {
  it('redocly lint (recommended) finds no error in the document, and finds the old webhook signature parameter', async () => {
    const result = await cli(
      'redocly',
      ['lint', documentFile, oldShapeFile, '--config', join(HERE, 'redocly.yaml'), '--format', 'json'],
      { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    );
    // One JSON report per file, printed one after the other.
    const reports = JSON.parse(`[${result.stdout.trim().replace(/\n\}\{\n/g, '\n},{\n')}]`) as Array<{
      problems: Array<{ ruleId: string; severity: string; location: Array<{ source: { ref: string } }> }>;
    }>;
    expect(reports).toHaveLength(2);
    const errors = (file: string) =>
      reports
        .flatMap((report) => report.problems)
        .filter(
          (problem) =>
            problem.severity === 'error' && resolve(ROOT, problem.location[0]?.source.ref ?? '') === file,
        )
        .map((problem) => problem.ruleId);
    expect(errors(documentFile)).toEqual([]);
    expect(errors(oldShapeFile)).toContain('security-defined');
  });

  it('spectral (spectral:oas and the OWASP API ruleset) finds no error, and finds a 429 without RateLimit-*', async () => {
    const result = await cli('spectral', [
      'lint',
      documentFile,
      oldShapeFile,
      '--ruleset',
      join(HERE, 'spectral.yaml'),
      '--format',
      'json',
      '--quiet',
    ]);
    const report = JSON.parse(result.stdout) as Array<{
      code: string;
      severity: number;
      source: string;
      path: string[];
    }>;
    const errors = (file: string) =>
      report
        .filter((problem) => problem.severity === 0 && problem.source === file)
        .map((problem) => `${problem.code} ${problem.path.join('/')}`);
    expect(errors(documentFile)).toEqual([]);
    expect(errors(oldShapeFile)).toContain(
      'owasp:api4:2023-rate-limit paths//api/widget/sessions/post/responses/429/headers',
    );
  });

  it('the checkout routes, and only they, declare the CORS headers (the rule turned off for the rest)', () => {
    const document = buildOpenApiDocument();
    const withCors = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, { responses: Record<string, { headers?: Json }> }>)
        .filter(([, operation]) =>
          Object.values(operation.responses).some((r) => r.headers?.['Access-Control-Allow-Origin']),
        )
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(withCors.sort()).toEqual(
      [
        'GET /api/widget/profile',
        'GET /api/widget/sessions/{id}/events',
        'HEAD /api/widget/sessions/{id}/events',
        'POST /api/widget/bootstrap',
        'POST /api/widget/sessions/{id}/accounts',
        'POST /api/widget/sessions/{id}/cancel',
        // Each one's CORS preflight, answered by the CORS middleware (documented from the same isWidgetRoute).
        'OPTIONS /api/widget/bootstrap',
        'OPTIONS /api/widget/profile',
        'OPTIONS /api/widget/sessions/{id}/accounts',
        'OPTIONS /api/widget/sessions/{id}/cancel',
        'OPTIONS /api/widget/sessions/{id}/events',
      ].sort(),
    );
  });
});

/** A free loopback port, for Prism to listen on. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

describe("the SDK through Prism's validating proxy", () => {
  let prism: RunningProcess | undefined;

  afterAll(async () => {
    await prism?.stop('SIGTERM');
  });

  it('a walk through sessions, the test helpers, webhook endpoints and their errors meets no violation', async () => {
    const port = await freePort();
    prism = startProcess(bin('prism'), [
      'proxy',
      documentFile,
      server.baseUrl,
      '--errors',
      '--cors=false',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ]);
    await prism.waitFor(/Prism is listening/, 30_000);
    const proxied = `http://127.0.0.1:${port}`;
    const shop: CreatedBusiness = await server.createBusiness({ name: 'Prism Shop' });
    const servicepay = new ServicePay(shop.keys.test.secretKey, { baseUrl: proxied, maxRetries: 0 });
    const receiver = await startReceiver();
    try {
      const created = await servicepay.sessions.create(
        {
          amount: 5_000,
          currency: 'NGN',
          payer: { name: 'Ada', email: 'ada@example.com' },
          metadata: { order: '7' },
        },
        { idempotencyKey: 'prism-walk-1' },
      );
      expect((await servicepay.sessions.retrieve(created.id)).amount).toBe(5_000);
      const paid = await servicepay.testHelpers.pay(created.id);
      expect(paid.session.status).toBe('successful');

      const endpoint = await servicepay.webhookEndpoints.create({ url: receiver.url, description: 'orders' });
      await servicepay.webhookEndpoints.update(endpoint.id, { description: 'all orders' });
      await servicepay.webhookEndpoints.rollSecret(endpoint.id);
      const listed = await servicepay.webhookEndpoints.list();
      expect(listed.data.map((entry) => entry.id)).toContain(endpoint.id);

      const open = await servicepay.sessions.create({
        amount: 1_200,
        currency: 'NGN',
        payer: { name: 'Grace', email: 'grace@example.com' },
      });
      const account = await servicepay.testHelpers.openAccount(open.id);
      await servicepay.testHelpers.simulateTransfer({
        accountNumber: account.virtualAccount.accountNumber,
        amount: 1_199,
      });
      await servicepay.testHelpers.expireAccount(open.id);
      expect((await servicepay.sessions.cancel(open.id)).status).toBe('cancelled');
      const expiring = await servicepay.sessions.create({
        amount: 900,
        currency: 'NGN',
        payer: { name: 'Ada', email: 'ada@example.com' },
      });
      expect((await servicepay.testHelpers.expire(expiring.id)).status).toBe('expired');

      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      const deliveries = await servicepay.webhookEndpoints.deliveries(endpoint.id, { limit: 5 });
      expect(deliveries.data.length).toBeGreaterThan(0);
      const eventId = deliveries.data[0]?.eventId as string;
      expect((await servicepay.events.resend(eventId, { endpointId: endpoint.id })).deliveries.length).toBe(
        1,
      );
      const sessions = await servicepay.sessions.list({ limit: 2 });
      expect(sessions.data).toHaveLength(2);

      // Payment links (issue 36): create, retrieve, list, update, the sessions made through one, and a 409.
      const link = await servicepay.paymentLinks.create({
        name: 'Prism link',
        amount: 5_000,
        currency: 'NGN',
        reusable: false,
        successUrl: 'https://shop.example/thanks/{SESSION_ID}',
      });
      expect((await servicepay.paymentLinks.retrieve(link.id)).url).toBe(link.url);
      expect((await servicepay.paymentLinks.list({ limit: 1 })).data[0]?.id).toBe(link.id);
      expect((await servicepay.paymentLinks.update(link.id, { name: 'Renamed', active: false })).active).toBe(
        false,
      );
      expect((await servicepay.sessions.list({ paymentLink: link.id })).data).toEqual([]);
      await expect(servicepay.paymentLinks.retrieve('pl_unknown')).rejects.toMatchObject({ statusCode: 404 });
      const qr = await fetch(`${proxied}/api/payment-links/${link.id}/qr.svg`, {
        headers: { authorization: `Bearer ${shop.keys.test.secretKey}` },
      });
      expect(qr.status).toBe(200);
      expect((await qr.text()).startsWith('<svg')).toBe(true);

      // Errors the SDK maps, each answered by the service and let through by the proxy as documented.
      await expect(servicepay.sessions.retrieve('ses_unknown')).rejects.toMatchObject({ statusCode: 404 });
      await expect(servicepay.sessions.cancel(created.id)).rejects.toMatchObject({ statusCode: 409 });
      await expect(
        new ServicePay(`sk_test_${'x'.repeat(32)}`, { baseUrl: proxied, maxRetries: 0 }).sessions.list(),
      ).rejects.toMatchObject({ statusCode: 401 });
      expect((await servicepay.webhookEndpoints.delete(endpoint.id)).deleted).toBe(true);
    } finally {
      await receiver.close();
    }
    // Prism's start-up lines list every operation with example path parameters drawn from lorem ipsum, whose
    // words include "error" (seen: /api/test/sessions/error/expire): only the lines after them are the walk's.
    const walkLines = prism
      .output()
      .split('\n')
      .filter((line) => !/\[CLI\].*\binfo\b/.test(line));
    expect(walkLines.join('\n')).not.toMatch(/violation|error/i);
  }, 60_000);
});
