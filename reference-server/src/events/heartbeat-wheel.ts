/** Where an item sits on the wheel: its bucket and its index in it; -1 when on none. */
export interface WheelPlace {
  bucket: number;
  slot: number;
}

/**
 * The heartbeat schedule of the push streams: the heartbeat interval is cut into `slices` buckets, and one
 * timer writes one bucket per slice, so no turn of the event loop writes to every stream. The wheel turns in
 * 97% of the interval, so that an event loop running up to 3% late (450 ms of 15 s) still keeps the promise
 * of a byte per interval. It keeps each item's place on the item itself (`placeOf`): no map, no closure per
 * item, O(1) to add and remove.
 *
 * @example
 * const wheel = new HeartbeatWheel<Stream>(15_000, 600, (stream) => stream.place, (stream) => stream.write(HEARTBEAT_FRAME));
 * wheel.start();
 * wheel.add(stream);
 */
export class HeartbeatWheel<T> {
  /** Bucket `i` is written at the `i`-th slice of every interval. */
  private readonly buckets: T[][];
  /** The bucket the next sweep writes. */
  private sweepAt = 0;
  /** Slices swept since `start`, to catch up with the clock rather than drift behind it. */
  private swept = 0;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    slices: number,
    private readonly placeOf: (item: T) => WheelPlace,
    private readonly beat: (item: T) => void,
  ) {
    this.buckets = Array.from({ length: Math.max(1, Math.floor(slices)) }, () => []);
  }

  /**
   * Runs the timer: each slice that falls due calls `sweep` (the wheel's own by default; an owner may pass one
   * that does more around it).
   */
  start(sweep: () => void = () => this.sweep()): void {
    const sliceMs = (this.intervalMs * 0.97) / this.buckets.length;
    this.startedAt = performance.now();
    this.swept = 0;
    this.timer = setInterval(() => {
      // Sweep every slice that fell due (timers fire late, never early): each bucket is written once per turn
      // of the wheel by the clock, not once per `slices` firings, so lateness does not add up.
      const due = Math.floor((performance.now() - this.startedAt) / sliceMs);
      for (let n = 0; this.swept < due && n < this.buckets.length; n++, this.swept++) sweep();
      this.swept = due;
    }, Math.ceil(sliceMs)); // never before the slice is due
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** How many items each bucket holds, in sweep order from bucket 0. */
  get sizes(): number[] {
    return this.buckets.map((bucket) => bucket.length);
  }

  /** Beats the items of the next bucket. */
  sweep(): void {
    const bucket = this.buckets[this.sweepAt] ?? [];
    this.sweepAt = (this.sweepAt + 1) % this.buckets.length;
    for (const item of bucket) this.beat(item);
  }

  /** Beats every item at once. */
  beatAll(): void {
    for (const bucket of this.buckets) {
      for (const item of bucket) this.beat(item);
    }
  }

  /**
   * A new item (a stream that has just had its first message) goes into the emptiest bucket of the half of the
   * wheel swept most recently, the latest swept on a tie: its first beat comes between half an interval and a
   * whole one after it was added (a whole one when items are few), and items added together, as after a
   * restart, still spread over half the buckets instead of piling into one.
   */
  add(item: T): void {
    const slices = this.buckets.length;
    let chosen: T[] | undefined;
    let index = -1;
    for (let back = 1; back <= Math.ceil(slices / 2); back++) {
      const at = (this.sweepAt - back + slices) % slices;
      const bucket = this.buckets[at];
      if (bucket && (!chosen || bucket.length < chosen.length)) {
        chosen = bucket;
        index = at;
        if (bucket.length === 0) break;
      }
    }
    if (!chosen) return;
    const place = this.placeOf(item);
    place.bucket = index;
    place.slot = chosen.push(item) - 1;
  }

  /** Takes an item off the wheel in O(1): its bucket's last item moves into its place. */
  remove(item: T): void {
    const place = this.placeOf(item);
    const bucket = this.buckets[place.bucket];
    if (!bucket) return;
    const last = bucket.pop();
    if (last !== undefined && last !== item) {
      bucket[place.slot] = last;
      this.placeOf(last).slot = place.slot;
    }
    place.bucket = -1;
    place.slot = -1;
  }
}
