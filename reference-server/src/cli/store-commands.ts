import { EnvironmentSchema, KeyKindSchema } from '@servicepay/node/protocol';
import { approveKyc, createBusiness, rollKey } from '../businesses/onboarding.ts';
import { listAudit, listCredits, listRefunds } from '../operator-lists.ts';
import { cliActor, limit, required } from './command-arguments.ts';
import { UsageError } from './command-errors.ts';
import { openExistingStore, openStore, type StoreFlags } from './command-store.ts';

// The operator's commands that work on the database directly, with no service running: onboarding a business
// (`business create`, `keys roll`, `kyc approve`) and reading what the portal does not show (`… list`).

/** The flags the store commands read, beside the database's. */
export interface StoreCommandFlags extends StoreFlags {
  readonly name?: string | undefined;
  readonly 'kyc-approved'?: boolean | undefined;
  readonly business?: string | undefined;
  readonly environment?: string | undefined;
  readonly kind?: string | undefined;
  readonly session?: string | undefined;
  readonly limit?: string | undefined;
  readonly json?: boolean | undefined;
}

/**
 * `business create`: a business and its four keys, shown this once.
 *
 * @example
 * await businessCreate({ name: 'Ada Shop', 'kyc-approved': true, json: true });
 */
export async function businessCreate(values: StoreCommandFlags): Promise<void> {
  const { store, close } = await openStore(values);
  const created = await createBusiness(
    store,
    required(values, 'name'),
    values['kyc-approved'] ?? false,
    Date.now(),
  );
  await close();
  if (values.json) console.log(JSON.stringify(created));
  else {
    console.log(`Business ${created.business.id} (${created.business.name}). Keys, shown this once:`);
    for (const environment of ['test', 'live'] as const) {
      console.log(
        `  ${environment}: ${created.keys[environment].secretKey}  ${created.keys[environment].publishableKey}`,
      );
    }
  }
}

/**
 * `keys roll`: a new key of one kind and environment, the old one revoked.
 *
 * @example
 * await keysRoll({ business: 'biz_…', environment: 'test', kind: 'secret' });
 */
export async function keysRoll(values: StoreCommandFlags): Promise<void> {
  const environment = EnvironmentSchema.safeParse(required(values, 'environment'));
  const kind = KeyKindSchema.safeParse(required(values, 'kind'));
  if (!environment.success) throw new UsageError('--environment is test or live');
  if (!kind.success) throw new UsageError('--kind is secret or publishable');
  const { store, close } = await openStore(values);
  const rolled = await rollKey(
    store,
    required(values, 'business'),
    environment.data,
    kind.data,
    Date.now(),
    cliActor(),
  );
  await close();
  if (!rolled) throw new UsageError(`no business ${values.business}`);
  console.log(
    values.json
      ? JSON.stringify(rolled)
      : `New key (shown once): ${rolled.key}; revoked: ${rolled.revokedKeyHint}`,
  );
}

/**
 * `kyc approve`: the business's live keys start to work.
 *
 * @example
 * await kycApprove({ business: 'biz_…' });
 */
export async function kycApprove(values: StoreCommandFlags): Promise<void> {
  const { store, close } = await openStore(values);
  const approved = await approveKyc(store, required(values, 'business'), Date.now(), cliActor());
  await close();
  if (!approved) throw new UsageError(`no business ${values.business}`);
  console.log(`KYC approved for ${values.business}: its live keys now work.`);
}

const LISTS = { 'credits list': listCredits, 'audit list': listAudit, 'refunds list': listRefunds } as const;

/** The list commands, by their words on the command line. */
export type ListCommand = keyof typeof LISTS;

/**
 * `credits list`, `audit list`, `refunds list`: rows of an existing database, as a table or JSON.
 *
 * @example
 * await list('audit list', { business: 'biz_…', limit: '50' });
 */
export async function list(command: ListCommand, values: StoreCommandFlags): Promise<void> {
  const { store, close } = await openExistingStore(values);
  try {
    const output = await LISTS[command](store, {
      businessId: values.business,
      sessionId: values.session,
      limit: limit(values),
      json: values.json ?? false,
    });
    console.log(output);
  } finally {
    await close();
  }
}
