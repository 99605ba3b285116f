import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bankPageRoutes } from './pages/bank-page.ts';
import { endpointPageRoutes } from './pages/endpoint-page.ts';
import { eventsPageRoutes } from './pages/events-page.ts';
import { keysPageRoutes } from './pages/keys-page.ts';
import { kycPageRoutes } from './pages/kyc-page.ts';
import { requestsPageRoutes } from './pages/requests-page.ts';
import { sessionPageRoutes } from './pages/session-page.ts';
import { sessionsPageRoutes } from './pages/sessions-page.ts';
import { signInPageRoutes } from './pages/sign-in-page.ts';
import { webhooksPageRoutes } from './pages/webhooks-page.ts';
import type { PortalServices } from './portal-deps.ts';
import { PORTAL_ROUTES, type PortalPage } from './portal-route-table.ts';

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

describe('one module per page', () => {
  // The factories only keep their deps: nothing is called until a request comes.
  const deps = {} as PortalServices;
  const modules: Record<Exclude<PortalPage, 'assets'>, object> = {
    'sign-in': signInPageRoutes(deps),
    sessions: sessionsPageRoutes(deps),
    session: sessionPageRoutes(deps),
    bank: bankPageRoutes(deps),
    keys: keysPageRoutes(deps),
    webhooks: webhooksPageRoutes(deps),
    endpoint: endpointPageRoutes(deps),
    events: eventsPageRoutes(deps),
    requests: requestsPageRoutes(deps),
    kyc: kycPageRoutes(),
  };

  it.each(Object.entries(modules))(
    'the %s page answers exactly its routes of the table',
    (page, handlers) => {
      const listed = Object.entries(PORTAL_ROUTES)
        .filter(([, route]) => route.page === page)
        .map(([name]) => name)
        .sort();
      expect(Object.keys(handlers).sort()).toEqual(listed);
    },
  );
});
