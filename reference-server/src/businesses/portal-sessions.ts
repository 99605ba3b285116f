import type { Environment, KeyKind, RolledKey } from '@servicepay/node/protocol';
import type { Business } from '../db/businesses.ts';
import type { Store } from '../db/store.ts';
import type { Clock } from '../internal/clock.ts';
import { sha256 } from '../internal/random.ts';
import { rollKeyIn } from './onboarding.ts';

/** Who signs in: the business and the secret key pasted, whose environment the session is held to. */
export interface PortalSignIn {
  /** The hash of the new session's cookie id (the id itself is only ever in the browser's cookie). */
  idHash: Buffer;
  businessId: string;
  apiKeyId: string;
  environment: Environment;
}

/**
 * Who is signed in to the portal, once the `portalSession` guard let a request through (the caller of a
 * portal operation, as `ApiCaller` is an API operation's).
 */
export interface PortalContext {
  business: Business;
  /**
   * The environment of the secret key that signed in: the only one this session reads or changes. Seeing the
   * other one takes a sign-in with that environment's secret key (a test key is handed to CI and laptops, and
   * must reach nothing live). API routing follows the key of each call, never this (spec §5.4).
   */
  environment: Environment;
  idHash: Buffer;
  /** The synchronizer token every state-changing form of this session carries. */
  csrfToken: string;
  /** The id (never the key) of the secret key this session was opened with: the audit log's actor. */
  apiKeyId: string;
}

/** The portal session a change is made from, as `PortalContext` holds it. */
export interface PortalSessionRef {
  idHash: Buffer;
  business: { id: string };
  environment: Environment;
}

/**
 * The developer portal's sign-ins, and the writes that change them: signing in and out, keeping a session
 * alive, and rolling a key from the portal (which moves the session that rolled it to the new key). The portal
 * reads and writes its sessions through this service only, as it changes everything else through the API's
 * services: it runs no write job of its own.
 *
 * @example
 * const portalSessions = new PortalSessions(store, clock, { lifetimeMs: 12 * 60 * 60_000 });
 * await portalSessions.open({ idHash: sha256(cookieId), businessId, apiKeyId, environment: 'test' }, previous?.idHash);
 */
export class PortalSessions {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly options: { lifetimeMs: number },
  ) {}

  /**
   * Opens a session for `signIn`, ending `replacing` (the browser's session before, if any: signing in again,
   * or to the other environment, replaces it), and drops sessions past their end, in one write.
   */
  async open(signIn: PortalSignIn, replacing?: Buffer): Promise<void> {
    const now = this.clock.now();
    await this.store.writes.run(async (tx) => {
      await tx.portalSessions.prune(now);
      if (replacing) await tx.portalSessions.remove(replacing);
      await tx.portalSessions.insert({
        ...signIn,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: now + this.options.lifetimeMs,
      });
    });
  }

  /** Signs the session out. */
  async end(idHash: Buffer): Promise<void> {
    await this.store.writes.run((tx) => tx.portalSessions.remove(idHash));
  }

  /** The session was used now: its idle clock starts again. */
  async touch(idHash: Buffer): Promise<void> {
    const now = this.clock.now();
    await this.store.writes.run((tx) => tx.portalSessions.touch(idHash, now));
  }

  /**
   * Rolls the business's key of `kind` in the session's environment (`rollKey`: a new key, the old revoked, the
   * audit entry naming `actor`). Rolling the key this session was opened with ends every other portal session
   * opened with it; the one that rolled it moves to the new key, in the same write. Undefined when the business
   * does not exist.
   */
  rollKey(session: PortalSessionRef, kind: KeyKind, actor: string): Promise<RolledKey | undefined> {
    const now = this.clock.now();
    return this.store.writes.run(async (tx) => {
      const rolled = await rollKeyIn(tx, session.business.id, session.environment, kind, now, actor);
      const current = await tx.portalSessions.find(session.idHash);
      const replacement = rolled && (await tx.apiKeys.findByHash(sha256(rolled.key)));
      if (current && current.keyRevokedAt !== null && replacement) {
        await tx.portalSessions.rebind(session.idHash, replacement.id);
      }
      return rolled;
    });
  }
}
