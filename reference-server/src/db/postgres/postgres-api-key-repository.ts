import { BoundedMap } from '../../internal/bounded-map.ts';
import {
  type ApiKeyWithOwner,
  keyWithOwnerByHash,
  type OwnedKeyRow,
  ownedKeyOf,
  REMEMBERED_KEYS_MAX,
  type RecalledKey,
  SqlApiKeyRepository,
} from '../api-keys.ts';
import { sql } from '../sql.ts';

/** The key, its business and the credentials version (migration 020), in one statement: one snapshot. */
const findWithVersion = sql<OwnedKeyRow & { credentialsVersion: number }>(
  keyWithOwnerByHash(`,
       (SELECT version FROM credentials_version WHERE only_row = 1) AS "credentialsVersion"`),
);

/**
 * API keys on PostgreSQL, for the pool's reads (authentication): every key found is remembered with the
 * credentials version read in the same statement, and `recall` answers it from memory. What makes that safe
 * across instances is the caller's part: a recalled key is trusted only when the rate limiter's hit for the same
 * request read the same version (`LimitDecision.credentialsVersion`), and read again otherwise, so a key rolled
 * or a business changed on any instance, committed before that hit, stops that request
 * (`middleware/authenticate.ts`). *Why:* reading the key was one of a keyed create's three round trips (issue 38;
 * the A/B is in `docs/decisions/api-performance.md`). Only keys that exist are remembered, at most
 * `REMEMBERED_KEYS_MAX`. A write job's repositories stay `SqlApiKeyRepository`: inside a transaction a row may be
 * uncommitted.
 *
 * @example
 * const recalled = keys.recall(hash); // { found, credentialsVersion } | undefined, no round trip
 * const decision = await limiter.hit(budget, now); // its statement reads the version too
 * const found =
 *   recalled && decision.credentialsVersion === recalled.credentialsVersion
 *     ? recalled.found
 *     : await keys.findWithOwner(hash);
 */
export class PostgresApiKeyRepository extends SqlApiKeyRepository {
  private readonly recalled = new BoundedMap<string, RecalledKey>(REMEMBERED_KEYS_MAX);
  /** The newest version a read returned: what is remembered under an older one is forgotten. */
  private newestVersion = -1;

  /** Reads the key as committed now, and remembers it with the version of that read. */
  override async findWithOwner(hash: Buffer): Promise<ApiKeyWithOwner | undefined> {
    const row = await this.db.get(findWithVersion, { hash });
    if (!row) return undefined;
    const { credentialsVersion, ...owned } = row;
    const found = ownedKeyOf(owned);
    if (credentialsVersion > this.newestVersion) {
      this.recalled.clear();
      this.newestVersion = credentialsVersion;
    }
    if (credentialsVersion === this.newestVersion)
      this.recalled.set(hash.toString('base64'), { found, credentialsVersion });
    return found;
  }

  recall(hash: Buffer): RecalledKey | undefined {
    return this.recalled.get(hash.toString('base64'));
  }

  /** How many keys are remembered now (at most `REMEMBERED_KEYS_MAX`). */
  override get rememberedCount(): number {
    return this.recalled.size;
  }
}
