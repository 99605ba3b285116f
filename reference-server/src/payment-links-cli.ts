import { parseArgs } from 'node:util';
import { ServicePay } from '@servicepay/node';

/** What `servicepay-server links …` takes (its own options, parsed here, apart from the other commands'). */
export const PAYMENT_LINKS_USAGE = `  servicepay-server links create --name NAME --amount MINOR_UNITS [--currency NGN] [--one-time] [--success-url URL] [--json]
  servicepay-server links list [--limit N] [--json]
  servicepay-server links show ID [--json]
  servicepay-server links deactivate ID | activate ID
  (the secret key in SERVICEPAY_SECRET_KEY or --key; the API at --api, SERVICEPAY_API_URL or http://127.0.0.1:4242)`;

const OPTIONS = {
  name: { type: 'string' },
  amount: { type: 'string' },
  currency: { type: 'string' },
  'one-time': { type: 'boolean' },
  'success-url': { type: 'string' },
  limit: { type: 'string' },
  key: { type: 'string' },
  api: { type: 'string' },
  json: { type: 'boolean' },
} as const;

/**
 * `servicepay-server links …`: a merchant's payment links from the command line, through the API with the
 * SDK (so the API's rules, budget and audit apply), printing each link's url. Answers the exit code: 0 done,
 * 2 a usage mistake, 1 the API refused (its code and message on stderr).
 *
 * @example
 * process.exitCode = await paymentLinksCli(['create', '--name', 'Ankara', '--amount', '500000']);
 */
export async function paymentLinksCli(argv: string[], env = process.env): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    console.error(`${(error as Error).message}\n${PAYMENT_LINKS_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [action, id] = positionals;
  const key = values.key ?? env.SERVICEPAY_SECRET_KEY;
  if (!key) {
    console.error(`a secret key is needed: --key or SERVICEPAY_SECRET_KEY\n${PAYMENT_LINKS_USAGE}`);
    return 2;
  }
  const baseUrl = values.api ?? env.SERVICEPAY_API_URL ?? `http://127.0.0.1:${env.SERVICEPAY_PORT ?? 4242}`;
  const client = new ServicePay(key, { baseUrl });
  const print = (link: { id: string; name: string; active: boolean; url: string }) =>
    process.stdout.write(
      values.json
        ? `${JSON.stringify(link)}\n`
        : `${link.id}  ${link.active ? 'active  ' : 'inactive'}  ${link.name}  ${link.url}\n`,
    );
  try {
    switch (action) {
      case 'create': {
        if (!values.name || !values.amount || !/^\d+$/.test(values.amount)) {
          console.error(`links create needs --name and --amount (minor units)\n${PAYMENT_LINKS_USAGE}`);
          return 2;
        }
        print(
          await client.paymentLinks.create({
            name: values.name,
            amount: Number(values.amount),
            currency: values.currency ?? 'NGN',
            reusable: !values['one-time'],
            ...(values['success-url'] ? { successUrl: values['success-url'] } : {}),
          }),
        );
        return 0;
      }
      case 'list': {
        const limit = Number(values.limit ?? 20);
        let shown = 0;
        for await (const link of client.paymentLinks.list({ limit: Math.min(limit, 100) })) {
          if (shown++ >= limit) break;
          print(link);
        }
        return 0;
      }
      case 'show':
      case 'deactivate':
      case 'activate': {
        if (!id) {
          console.error(`links ${action} needs the link's id (pl_…)\n${PAYMENT_LINKS_USAGE}`);
          return 2;
        }
        print(
          action === 'show'
            ? await client.paymentLinks.retrieve(id)
            : await client.paymentLinks.update(id, { active: action === 'activate' }),
        );
        return 0;
      }
      default:
        console.error(`unknown links command "${action ?? ''}"\n${PAYMENT_LINKS_USAGE}`);
        return 2;
    }
  } catch (error) {
    const failure = error as { statusCode?: number; code?: string; message: string };
    console.error(`refused (${failure.statusCode ?? 'no answer'} ${failure.code ?? ''}): ${failure.message}`);
    return 1;
  }
}
