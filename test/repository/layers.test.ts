import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child-process.ts';

// Issue 27: every import in `reference-server/src` runs down, from a layer to the same or a lower one, never
// back up. A type or function two layers need lives in the lower one (the bank's account answers with the
// bank's books in db/, the session views and `isTerminal` in views/, the request id in internal/).

const SOURCE = join(ROOT, 'reference-server', 'src');

/** The layers, lowest first: a module may import its own layer's modules and any below, never one above. */
const LAYERS: readonly (readonly string[])[] = [
  ['errors.ts', 'domain-errors.ts'],
  ['internal'],
  ['widget-hosts'],
  ['db', 'config.ts', 'metrics'],
  ['businesses', 'views', 'ledger', 'exports'],
  ['events', 'middleware'],
  ['bank'],
  ['sessions', 'refunds'],
  ['payment-links'],
  ['routes', 'hosted-pages'],
  ['portal'],
  ['openapi'],
  ['app.ts', 'api-server.ts'],
  ['service.ts'],
  ['cli.ts', 'cli', 'index.ts', 'operator-lists.ts', 'payment-links-cli.ts', 'export-command.ts'],
];

/** The layer of a module of the service, by its first path segment under `src/`. */
function layerOf(file: string): number {
  const top = relative(SOURCE, file).split('/')[0] ?? '';
  const layer = LAYERS.findIndex((names) => names.includes(top));
  if (layer < 0) throw new Error(`${relative(ROOT, file)} is in no layer: add ${top} to LAYERS`);
  return layer;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The service's own modules `text` (the source of `file`) imports or re-exports, static or dynamic. */
function importedModules(file: string, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.[^'"]*)['"]/g)) {
    const target = resolve(dirname(file), match[1] ?? '');
    if (target.startsWith(`${SOURCE}/`)) found.push(target);
  }
  return found;
}

/** Each import of `file` that runs back up, as `from → to`. */
function arrowsBackUp(file: string, text: string): string[] {
  const from = layerOf(file);
  return importedModules(file, text)
    .filter((target) => layerOf(target) > from)
    .map((target) => `${relative(SOURCE, file)} → ${relative(SOURCE, target)}`);
}

describe('imports in reference-server/src run down the layers', () => {
  it('no module imports one of a higher layer', () => {
    const files = sourceFiles(SOURCE);
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((file) => arrowsBackUp(file, readFileSync(file, 'utf8')))).toEqual([]);
  });

  it('the check sees each arrow that ran back up before issue 27', () => {
    const samples = [
      ['db/bank-books.ts', "import type { CloseAccountResult } from '../bank/bank-gateway.ts';"],
      ['internal/client-error.ts', "import { newRequestId } from '../middleware/request-id.ts';"],
      ['bank/notification-processor.ts', "import { isTerminal } from '../sessions/session-lifecycle.ts';"],
      ['events/push-streams.ts', "import { toStatusMessage } from '../sessions/session-views.ts';"],
      ['middleware/idempotency.ts', "import { sendJsonText } from '../routes/envelope.ts';"],
      [
        'db/postgres/postgres-broadcaster.ts',
        "import type { Broadcaster } from '../../events/broadcaster.ts';",
      ],
    ] as const;
    for (const [file, line] of samples) expect(arrowsBackUp(join(SOURCE, file), line), line).toHaveLength(1);
    // An import down, or within a layer, is not refused.
    expect(
      arrowsBackUp(join(SOURCE, 'routes/sessions.ts'), "import { x } from '../middleware/idempotency.ts';"),
    ).toEqual([]);
    expect(arrowsBackUp(join(SOURCE, 'db/backend.ts'), "import { x } from './broadcaster.ts';")).toEqual([]);
  });
});
