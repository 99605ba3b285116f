/**
 * A `Map` that never holds more than `maxEntries`: adding a new key to a full one empties it first. For memos
 * whose every entry can be read again at the cost of the work it saves (a key lookup, a decryption), where a
 * client sending endless distinct inputs must not grow memory without end, and where an LRU's bookkeeping on
 * every hit would cost more than an occasional refill.
 *
 * @example
 * const opened = new BoundedMap<string, string>(1024);
 * opened.set(ciphertext, secretBox.open(ciphertext));
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Sets `key`; when it is new and the map is full, everything else is forgotten first. */
  set(key: K, value: V): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, value);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
