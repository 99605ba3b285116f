import { describe, expect, it } from 'vitest';
import { SlidingWindowLimiter } from './sliding-window-limiter.ts';

describe('SlidingWindowLimiter', () => {
  it('allows exactly `limit` hits in a rolling window, counting down remaining', () => {
    const limiter = new SlidingWindowLimiter(3, 60_000);
    expect(limiter.hit('k', 0)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 60 });
    expect(limiter.hit('k', 10_000)).toEqual({ allowed: true, limit: 3, remaining: 1, resetSeconds: 50 });
    // The last one allowed says when the next slot opens: when the hit at t = 0 leaves, 40 s from now.
    expect(limiter.hit('k', 20_000)).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 40 });
    expect(limiter.hit('k', 20_001)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 40 });
    expect(limiter.hit('k', 59_999).allowed).toBe(false);
    // Exactly one window after the first hit, it has left.
    expect(limiter.hit('k', 60_000).allowed).toBe(true);
    expect(limiter.hit('k', 60_001)).toMatchObject({ allowed: false, resetSeconds: 10 });
  });

  it('rounds the reset up to whole seconds and never answers 0 when refusing', () => {
    const limiter = new SlidingWindowLimiter(1, 60_000);
    limiter.hit('k', 0);
    expect(limiter.hit('k', 59_999)).toMatchObject({ allowed: false, resetSeconds: 1 });
    expect(limiter.hit('k', 58_500)).toMatchObject({ allowed: false, resetSeconds: 2 });
  });

  it('does not count refused hits', () => {
    const limiter = new SlidingWindowLimiter(2, 1_000);
    limiter.hit('k', 0);
    limiter.hit('k', 0);
    for (let t = 1; t < 1_000; t += 100) expect(limiter.hit('k', t).allowed).toBe(false);
    expect(limiter.hit('k', 1_000).remaining).toBe(1);
  });

  it('keeps keys apart', () => {
    const limiter = new SlidingWindowLimiter(1, 60_000);
    expect(limiter.hit('a', 0).allowed).toBe(true);
    expect(limiter.hit('a', 1).allowed).toBe(false);
    expect(limiter.hit('b', 1).allowed).toBe(true);
  });

  it('stays exact over many hits (the compaction keeps the window right)', () => {
    const limiter = new SlidingWindowLimiter(150, 60_000);
    let allowed = 0;
    // One hit every 100 ms for 10 minutes: 600 per window offered, 150 allowed per rolling minute.
    for (let t = 0; t < 600_000; t += 100) if (limiter.hit('k', t).allowed) allowed++;
    expect(allowed).toBe(150 * 10);
  });

  it('prune forgets idle keys only', () => {
    const limiter = new SlidingWindowLimiter(1, 60_000);
    limiter.hit('idle', 0);
    limiter.hit('busy', 30_000);
    limiter.prune(60_000);
    // The idle key was forgotten: a fresh budget. The busy key still remembers its hit.
    expect(limiter.hit('idle', 60_000).allowed).toBe(true);
    expect(limiter.hit('busy', 60_000).allowed).toBe(false);
  });

  it('peek tells what hit would decide, and counts nothing', () => {
    const limiter = new SlidingWindowLimiter(2, 60_000);
    expect(limiter.peek('k', 0)).toMatchObject({ allowed: true, remaining: 2 });
    limiter.hit('k', 0);
    expect(limiter.peek('k', 1)).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.peek('k', 1)).toMatchObject({ allowed: true, remaining: 1 });
    limiter.hit('k', 10_000);
    expect(limiter.peek('k', 20_000)).toEqual({ allowed: false, limit: 2, remaining: 0, resetSeconds: 40 });
    expect(limiter.hit('k', 20_000)).toEqual(limiter.peek('k', 20_000));
    // The refusal it foretold ends when the first hit leaves the window, as hit's does.
    expect(limiter.peek('k', 60_000).allowed).toBe(true);
    expect(limiter.hit('k', 60_000)).toMatchObject({ allowed: true, remaining: 0 });
  });
});
