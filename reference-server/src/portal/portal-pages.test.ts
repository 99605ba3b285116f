import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PORTAL_DIR = fileURLToPath(new URL('.', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the portal changes things through the services only (issue 27)', () => {
  it('no portal module runs a write job or opens a sealed secret itself', () => {
    const offending = sourceFiles(PORTAL_DIR).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return ['.writes.run(', 'writes.run(', 'secretBox.open('].some((call) => text.includes(call))
        ? [file.slice(PORTAL_DIR.length)]
        : [];
    });
    expect(offending).toEqual([]);
  });
});
