import { z } from 'zod';
import { EnvironmentSchema } from './common.ts';

export const KeyKindSchema = z.enum(['secret', 'publishable']);
export type KeyKind = z.infer<typeof KeyKindSchema>;

/** Key prefixes: `sk_` for servers, `pk_` for the browser, followed by the environment and 32 base62 characters. */
export const API_KEY_PATTERN = /^(sk|pk)_(test|live)_[0-9A-Za-z]{32}$/;

/** A key pair as `servicepay-server business create --json` prints it: the only time the keys are shown. */
export const KeyPairSchema = z.object({ secretKey: z.string(), publishableKey: z.string() });

export const CreatedBusinessSchema = z.object({
  business: z.object({ id: z.string(), name: z.string() }),
  keys: z.object({ test: KeyPairSchema, live: KeyPairSchema }),
});
export type CreatedBusiness = z.infer<typeof CreatedBusinessSchema>;

/** `servicepay-server keys roll --json`: the new key, shown once; the old one is already revoked. */
export const RolledKeySchema = z.object({
  environment: EnvironmentSchema,
  kind: KeyKindSchema,
  key: z.string(),
  revokedKeyHint: z.string(),
});
export type RolledKey = z.infer<typeof RolledKeySchema>;
