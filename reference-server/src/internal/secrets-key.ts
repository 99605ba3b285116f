import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** The service cannot get its secrets key safely; the message is one line saying why and what to do. */
export class SecretsKeyError extends Error {
  override readonly name = 'SecretsKeyError';
}

export interface SecretsKeySource {
  /** The SQLite file; the development default keeps the key file beside it. */
  dbPath: string;
  /** An explicit key file (`--secrets-key-file`, `SERVICEPAY_SECRETS_KEY_FILE`), or null. */
  keyFile: string | null;
  /** Production mode (`--production` or `NODE_ENV=production`). */
  production: boolean;
  /** `SERVICEPAY_SECRETS_KEY`: 32 bytes, base64. */
  fromEnvironment?: string | undefined;
}

/** The file name of the development default, beside the database. */
export const DEFAULT_KEY_FILE_NAME = 'servicepay.secrets-key';

/**
 * The key of the service's SecretBox (remembered idempotent responses, webhook signing secrets).
 *
 * - `SERVICEPAY_SECRETS_KEY` (base64, 32 bytes) when set;
 * - otherwise a key file: the explicit one, or in development `servicepay.secrets-key` beside the database,
 *   created on first start with owner-only permissions.
 *
 * In production mode the key must not live beside the data it protects: a copy of the database folder (a
 * backup, a snapshot, a stolen volume) would carry its own key. So production refuses the default, refuses an
 * explicit file inside the database's folder, and refuses to create a missing one (on a deployed machine a
 * missing key file is a lost mount far more often than a first start, and a new key would make every stored
 * secret unreadable).
 *
 * @example
 * const key = loadSecretsKey({ dbPath: '/var/lib/servicepay/db.sqlite', keyFile: '/run/secrets/servicepay-key',
 *   production: true });
 */
export function loadSecretsKey(source: SecretsKeySource): Buffer {
  const fromEnvironment = source.fromEnvironment;
  if (fromEnvironment) {
    const key = Buffer.from(fromEnvironment, 'base64');
    if (key.length !== 32)
      throw new SecretsKeyError('SERVICEPAY_SECRETS_KEY must be 32 bytes, base64-encoded');
    return key;
  }
  const databaseFolder = resolve(dirname(source.dbPath));
  if (source.production) {
    if (source.keyFile === null) {
      throw new SecretsKeyError(
        'production mode: set SERVICEPAY_SECRETS_KEY or --secrets-key-file PATH outside the database folder; the secrets key is not kept beside the database it protects',
      );
    }
    const keyFile = resolve(source.keyFile);
    if (!existsSync(keyFile)) {
      throw new SecretsKeyError(
        `production mode: the secrets key file ${keyFile} does not exist; create it (32 random bytes, base64) rather than let the service make a new key that cannot read stored secrets`,
      );
    }
    if (isInside(realpathSync(dirname(keyFile)), realFolder(databaseFolder))) {
      throw new SecretsKeyError(
        `production mode: the secrets key file ${keyFile} is inside the database folder ${databaseFolder}; keep it elsewhere, so a copy of the data does not carry its key`,
      );
    }
    return readKeyFile(keyFile);
  }
  const keyFile =
    source.keyFile === null ? join(databaseFolder, DEFAULT_KEY_FILE_NAME) : resolve(source.keyFile);
  if (existsSync(keyFile)) return readKeyFile(keyFile);
  const key = randomBytes(32);
  mkdirSync(dirname(keyFile), { recursive: true });
  writeFileSync(keyFile, key.toString('base64'), { mode: 0o600, flag: 'wx' });
  return key;
}

function readKeyFile(path: string): Buffer {
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== 32)
    throw new SecretsKeyError(`the secrets key file ${path} must hold 32 bytes, base64-encoded`);
  return key;
}

/** The folder with symbolic links resolved where it exists, so a link cannot hide that it is the same place. */
function realFolder(folder: string): string {
  return existsSync(folder) ? realpathSync(folder) : folder;
}

function isInside(path: string, folder: string): boolean {
  const fromFolder = relative(folder, path);
  const outside = fromFolder === '..' || fromFolder.startsWith(`..${sep}`) || isAbsolute(fromFolder);
  return !outside;
}
