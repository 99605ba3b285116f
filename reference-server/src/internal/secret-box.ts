import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject } from 'node:crypto';
import { randomBytesFromPool } from './random.ts';

/**
 * Authenticated encryption (AES-256-GCM) for secrets the service must read back: webhook signing secrets and
 * remembered idempotent responses that hold a client secret. Hashing is not an option for those, so they are
 * encrypted with a key that lives outside the database: a copy of the database alone reveals none of them.
 */
export class SecretBox {
  /**
   * The key as a `KeyObject`, made once: given a Buffer, every `createCipheriv` makes one of its own, which cost
   * two thirds of a seal (about 14 of 21 µs; issue 38's profile of the keyed create, which seals every answer).
   */
  private readonly key: KeyObject;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.key = createSecretKey(key);
  }

  seal(plaintext: string): string {
    // A fresh 96-bit nonce from the CSPRNG pool, never reused (random.ts): one `randomBytes` call per seal
    // was a measurable share of a keyed create (issue 12's profile).
    const iv = randomBytesFromPool(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      'v1',
      iv.toString('base64'),
      cipher.getAuthTag().toString('base64'),
      body.toString('base64'),
    ].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  }
}
