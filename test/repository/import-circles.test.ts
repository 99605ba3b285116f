import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import madge from 'madge';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';

// Issue 35: no import circle, type-only ones included (madge counts `import type` as an import). Two had
// formed through types: the middleware through the widget's caller, the SDK's client, transport and resources
// through the option types. A type two modules share lives in a module below both.

const PACKAGES = ['reference-server/src', 'sdk/src', 'widget/src'] as const;

/** The import graph of the `.ts` modules under `dir`. */
async function graphOf(dir: string): Promise<{ modules: number; circles: string[] }> {
  // madge's TypeScript parser warns of its own use of a deprecated node field, once per file: not ours to fix.
  const noDeprecation = process.noDeprecation === true;
  process.noDeprecation = true;
  try {
    const result = await madge(dir, { fileExtensions: ['ts'] });
    return {
      modules: Object.keys(result.obj()).length,
      circles: result.circular().map((files) => files.join(' > ')),
    };
  } finally {
    process.noDeprecation = noDeprecation;
  }
}

describe('no import circle', () => {
  for (const dir of PACKAGES) {
    it(`in ${dir}`, async () => {
      const { modules, circles } = await graphOf(join(ROOT, dir));
      // The graph is read at all: an empty one would hold no circle either.
      expect(modules).toBeGreaterThan(20);
      expect(circles).toEqual([]);
    });
  }

  const scratch = mkdtempSync(join(tmpdir(), 'servicepay-circles-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('the check sees a circle made of type imports alone', async () => {
    writeFileSync(join(scratch, 'a.ts'), "import type { B } from './b.ts';\nexport interface A { b?: B }\n");
    writeFileSync(join(scratch, 'b.ts'), "import type { A } from './a.ts';\nexport interface B { a?: A }\n");
    expect((await graphOf(scratch)).circles).toEqual(['a.ts > b.ts']);
  });
});
