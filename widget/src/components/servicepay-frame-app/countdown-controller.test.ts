import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { describe, expect, it } from 'vitest';
import { CountdownController } from './countdown-controller.ts';

// The countdown's arithmetic, apart from the element: the time left on the service's clock, and the 10, 5 and
// 1 minute milestones read out once each. The browser suites (test/browser/checkout-expiry.test.ts) drive the
// whole checkout; these pin the controller's own promises.

/** A host as Lit's element is to its controllers: it registers them and counts the renders they ask for. */
function fakeHost() {
  const host = {
    controllers: [] as ReactiveController[],
    updates: 0,
    addController(controller: ReactiveController) {
      host.controllers.push(controller);
    },
    removeController() {},
    requestUpdate() {
      host.updates += 1;
    },
    updateComplete: Promise.resolve(true),
  };
  return host;
}

const MINUTE = 60_000;

describe('CountdownController', () => {
  it("reads the time left from expiresAt on the service's clock", () => {
    const host = fakeHost();
    let expiresAt: string | undefined;
    let offset = 0;
    const countdown = new CountdownController(
      host as unknown as ReactiveControllerHost,
      { expiresAt: () => expiresAt, clockOffsetMs: () => offset },
      () => undefined,
    );
    expect(host.controllers).toEqual([countdown]);
    // No account yet: nothing is left.
    expect(countdown.remainingMs()).toBe(0);
    expiresAt = new Date(countdown.now + 30 * MINUTE).toISOString();
    expect(countdown.remainingMs()).toBe(30 * MINUTE);
    // The service's clock runs 2 minutes ahead of this one: 2 minutes less are left.
    offset = 2 * MINUTE;
    expect(countdown.remainingMs()).toBe(28 * MINUTE);
  });

  it('names each milestone once, when the time left first drops under it, and again after restart', () => {
    const host = fakeHost();
    const countdown = new CountdownController(
      host as unknown as ReactiveControllerHost,
      { expiresAt: () => undefined, clockOffsetMs: () => 0 },
      () => undefined,
    );
    const reached = (left: number) => countdown.milestoneReached(left);
    expect(reached(11 * MINUTE)).toBeUndefined();
    // Exactly 10 minutes left is not yet under 10 minutes.
    expect(reached(10 * MINUTE)).toBeUndefined();
    expect(reached(10 * MINUTE - 1_000)).toBe(10);
    expect(reached(10 * MINUTE - 2_000)).toBeUndefined();
    expect(reached(5 * MINUTE - 1_000)).toBe(5);
    expect(reached(MINUTE - 1_000)).toBe(1);
    expect(reached(MINUTE - 2_000)).toBeUndefined();
    const before = host.updates;
    countdown.restart();
    expect(host.updates).toBe(before + 1);
    expect(reached(5 * MINUTE - 1_000)).toBe(5);
  });

  it('each tick redraws the host and hands it the time left', () => {
    const host = fakeHost();
    const expiresAt = new Date(Date.now() + 3 * MINUTE).toISOString();
    const told: number[] = [];
    const countdown = new CountdownController(
      host as unknown as ReactiveControllerHost,
      { expiresAt: () => expiresAt, clockOffsetMs: () => 0 },
      (left) => told.push(left),
    );
    countdown.tick();
    expect(host.updates).toBe(1);
    expect(told).toHaveLength(1);
    expect(told[0]).toBeGreaterThan(3 * MINUTE - 5_000);
    expect(told[0]).toBeLessThanOrEqual(3 * MINUTE);
  });
});
