/**
 * `npm start`: the whole product on its embedded defaults. Starts the reference service on
 * `data/servicepay.db` and prints its URL and the development business's test keys.
 *
 * Keys are stored only as hashes, so to print them on every start the development keys are also kept in
 * `data/development-keys.json` (owner-only permissions, never committed): a local development convenience,
 * not how a deployed service keeps keys.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CreatedBusiness } from '@servicepay/node/protocol';
import { createBusiness, createService } from '../reference-server/src/index.ts';
import { sha256 } from '../reference-server/src/internal/random.ts';

const dbPath = process.env.SERVICEPAY_DB ?? 'data/servicepay.db';
const port = Number(process.env.SERVICEPAY_PORT ?? 4242);
const keysFile = join(dirname(dbPath), 'development-keys.json');

const service = createService({ dbPath, port });
const { store } = service.deps;

function developmentBusiness(): CreatedBusiness {
  if (existsSync(keysFile)) {
    const saved = JSON.parse(readFileSync(keysFile, 'utf8')) as CreatedBusiness;
    const key = store.apiKeys.findByHash(sha256(saved.keys.test.secretKey));
    if (key && key.revokedAt === null) return saved;
  }
  const created = createBusiness(store, 'Development Shop', false, Date.now());
  writeFileSync(keysFile, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
  return created;
}

const business = developmentBusiness();
const { url } = await service.start();

console.log(`
ServicePay is running (database ${dbPath})

  API                ${url}
  Health             ${url}/health

Development business ${business.business.name} (${business.business.id}), test keys:
  secret key         ${business.keys.test.secretKey}
  publishable key    ${business.keys.test.publishableKey}

Try it:
  curl -s -X POST ${url}/api/widget/sessions \\
    -H "Authorization: Bearer ${business.keys.test.secretKey}" -H "Content-Type: application/json" \\
    -d '{"amount":500000,"currency":"NGN","payer":{"name":"Ada","email":"ada@example.com"}}'

Press Ctrl+C to stop.`);

const stop = () => {
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
