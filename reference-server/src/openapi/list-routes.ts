import type { Express } from 'express';

/** One route an express app answers: the method and the path with `{param}` placeholders (OpenAPI style). */
export interface RouteEntry {
  method: string;
  path: string;
}

type Layer = {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  rawPath?: string;
  name?: string;
};

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function walk(stack: readonly Layer[], prefix: string, into: RouteEntry[]): void {
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const path of paths) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all')
            into.push({ method, path: toOpenApiPath(`${prefix}${path}`.replace(/\/$/, '') || '/') });
        }
      }
    } else if (layer.handle.stack) {
      const mount = layer.rawPath && layer.rawPath !== '/' ? layer.rawPath : '';
      walk(layer.handle.stack, `${prefix}${mount}`, into);
    }
  }
}

/**
 * Every route an express 5 app answers, read from its router (mounted routers included), so a check of the
 * OpenAPI document compares it with what the server really serves rather than with a list kept by hand.
 *
 * @example
 * listRoutes(createApp(deps)); // [{ method: 'get', path: '/health' }, { method: 'post', path: '/api/widget/sessions' }, …]
 */
export function listRoutes(app: Express): RouteEntry[] {
  const routes: RouteEntry[] = [];
  const router = (app as unknown as { router: { stack: Layer[] } }).router;
  walk(router.stack, '', routes);
  return routes;
}
