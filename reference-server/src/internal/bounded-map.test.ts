import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.ts';

describe('BoundedMap', () => {
  it('holds at most its bound: a new key in a full map empties it first, a known key is replaced in place', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('b', 3);
    expect([map.size, map.get('a'), map.get('b')]).toEqual([2, 1, 3]);
    map.set('c', 4);
    expect([map.size, map.get('a'), map.get('b'), map.get('c')]).toEqual([1, undefined, undefined, 4]);
    for (let i = 0; i < 100; i++) map.set(`flood-${i}`, i);
    expect(map.size).toBeLessThanOrEqual(2);
  });

  it('forgets one key or all of them', () => {
    const map = new BoundedMap<string, number>(4);
    map.set('a', 1);
    map.set('b', 2);
    map.delete('a');
    expect([map.get('a'), map.get('b')]).toEqual([undefined, 2]);
    map.clear();
    expect(map.size).toBe(0);
  });
});
