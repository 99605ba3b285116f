import { afterEach, beforeEach, vi } from 'vitest';

// Unexpected console output is a defect (a swallowed error, a leaked secret): fail the test that caused it.
// A test that expects output spies on the console itself, which replaces these spies.
const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;

beforeEach(() => {
  for (const method of methods) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      throw new Error(`Unexpected console.${method}: ${args.map(String).join(' ')}`);
    });
  }
});

afterEach(() => {
  vi.restoreAllMocks();
});
