import type { NextFunction, Request, Response } from 'express';
import { describe, expect, test } from 'vitest';
import { HttpError } from '../errors.ts';
import { refuseLoneSurrogates } from './well-formed-text.ts';

/** Runs the middleware on a parsed body; returns what it passed to `next`. */
function run(body: unknown): unknown {
  let passed: unknown = 'not called';
  const next: NextFunction = (error?: unknown) => {
    passed = error;
  };
  refuseLoneSurrogates({ body } as Request, {} as Response, next);
  return passed;
}

describe('refuseLoneSurrogates', () => {
  test('passes well-formed text, emoji included, and bodies that are not objects', () => {
    expect(run({ payer: { name: 'Ada 🙂' }, list: ['a', 1, null] })).toBeUndefined();
    expect(run(undefined)).toBeUndefined();
  });

  test('names every path holding a lone surrogate, in values and in keys', () => {
    const error = run(JSON.parse('{"payer":{"name":"A\\ud800"},"list":["ok","\\udfff"],"\\ud83d":1}'));
    expect(error).toBeInstanceOf(HttpError);
    const { status, code, fieldErrors } = error as HttpError;
    expect({ status, code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(fieldErrors?.map((entry) => entry.path).sort()).toEqual(['\ud83d', 'list.1', 'payer.name'].sort());
  });

  test('walks a body nested 20,000 deep without overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(20_000)}"\\ud800"${']'.repeat(20_000)}`);
    const error = run(deep) as HttpError;
    expect(error.code).toBe('validation_failed');
    expect(error.fieldErrors).toHaveLength(1);
    // The path is cut, so the answer stays small.
    expect(error.fieldErrors?.[0]?.path.length).toBeLessThanOrEqual(201);
  });

  test('reports at most ten paths', () => {
    const error = run(
      Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, '\ud800'])),
    ) as HttpError;
    expect(error.fieldErrors).toHaveLength(10);
  });
});
