import { defaultConfig } from '../config.ts';
import { port, required } from './command-arguments.ts';
import { CommandFailed, UsageError } from './command-errors.ts';

/** The flags `transfer` reads. */
export interface TransferFlags {
  readonly account?: string | undefined;
  readonly amount?: string | undefined;
  readonly api?: string | undefined;
}

/** How long `transfer` waits for the service (the bank's notification included) before giving up. */
const TRANSFER_TIMEOUT_MS = 30_000;

/**
 * The API `transfer` calls, and where that choice came from (named when it cannot connect): `--api`, else
 * `SERVICEPAY_API_URL`, else `SERVICEPAY_PORT` on 127.0.0.1, else 127.0.0.1:4242, where `npm start` and
 * `servicepay-server start` listen by default.
 */
function transferApi(values: TransferFlags): { url: URL; from: string } {
  const candidates: Array<[string | undefined, string]> = [
    [values.api, '--api'],
    [process.env.SERVICEPAY_API_URL, 'SERVICEPAY_API_URL'],
  ];
  for (const [value, from] of candidates) {
    if (value === undefined || value === '') continue;
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
      throw new UsageError(`${from} must be an http(s) URL such as http://127.0.0.1:4242`);
    return { url: new URL(value), from };
  }
  const envPort = process.env.SERVICEPAY_PORT;
  const chosen = port(envPort, defaultConfig().port, 'SERVICEPAY_PORT');
  return {
    url: new URL(`http://127.0.0.1:${chosen}`),
    from: envPort ? 'SERVICEPAY_PORT' : 'the default port',
  };
}

/** The low-level reason a request never got an answer (`ECONNREFUSED`, `ENOTFOUND`, a timeout...). */
function connectionReason(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${TRANSFER_TIMEOUT_MS / 1000} s`;
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  return error instanceof Error ? error.message : String(error);
}

/**
 * `servicepay-server transfer`: pays a test account through the running API's simulated bank
 * (`POST /bank/transfers`), and prints what the bank answered.
 *
 * @example
 * await transfer({ account: '1000000000', amount: '500000', api: 'http://127.0.0.1:4242' });
 */
export async function transfer(values: TransferFlags): Promise<void> {
  const amount = Number(required(values, 'amount'));
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new UsageError('--amount is a positive whole number of minor units');
  const accountNumber = required(values, 'account');
  const api = transferApi(values);
  const target = new URL('bank/transfers', api.url.href.endsWith('/') ? api.url : `${api.url.href}/`);
  let response: Response;
  try {
    response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountNumber, amount }),
      signal: AbortSignal.timeout(TRANSFER_TIMEOUT_MS),
    });
  } catch (error) {
    throw new CommandFailed(
      `Could not reach the ServicePay API at ${api.url.origin} (${connectionReason(error)}; from ${api.from}): start it with npm start, or point at the running one with --api URL or SERVICEPAY_API_URL (or SERVICEPAY_PORT).`,
    );
  }
  let body: { meta?: { message?: string; code?: string }; data?: unknown } | undefined;
  try {
    body = (await response.json()) as typeof body;
  } catch {
    body = undefined;
  }
  if (!body?.meta) {
    throw new CommandFailed(
      `${api.url.origin} answered ${response.status} without a ServicePay envelope: is it the ServicePay API? Set --api URL or SERVICEPAY_API_URL.`,
    );
  }
  if (!response.ok) {
    throw new CommandFailed(
      `Transfer refused (${response.status} ${body.meta.code ?? 'no code'}): ${body.meta.message ?? 'no message'}`,
    );
  }
  console.log(JSON.stringify(body.data, null, 2));
}
