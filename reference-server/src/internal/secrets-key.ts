import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * The key of the service's SecretBox: from `SERVICEPAY_SECRETS_KEY` (base64, 32 bytes) when set, otherwise
 * from a key file beside the database, created on first start with owner-only permissions.
 */
export function loadSecretsKey(
  keyFilePath: string,
  fromEnvironment = process.env.SERVICEPAY_SECRETS_KEY,
): Buffer {
  if (fromEnvironment) {
    const key = Buffer.from(fromEnvironment, 'base64');
    if (key.length !== 32) throw new Error('SERVICEPAY_SECRETS_KEY must be 32 bytes, base64-encoded');
    return key;
  }
  if (existsSync(keyFilePath)) return Buffer.from(readFileSync(keyFilePath, 'utf8').trim(), 'base64');
  const key = randomBytes(32);
  writeFileSync(keyFilePath, key.toString('base64'), { mode: 0o600, flag: 'wx' });
  return key;
}
