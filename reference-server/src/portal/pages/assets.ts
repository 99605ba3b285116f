import { readFileSync } from 'node:fs';
import { HttpError } from '../../errors.ts';
import { defineOperation } from '../../routes/operation.ts';

const ASSETS = {
  'portal.css': { type: 'text/css; charset=utf-8', file: new URL('../assets/portal.css', import.meta.url) },
  'portal.js': {
    type: 'text/javascript; charset=utf-8',
    file: new URL('../assets/portal.js', import.meta.url),
  },
} as const;

/** Each file read once, on its first request. */
const loaded = new Map<string, { type: string; body: Buffer }>();

/** The portal's stylesheet and script (`GET /portal/assets/{name}`): the only script and style a page loads. */
export const ASSETS_ROUTE = [
  defineOperation({
    method: 'get',
    path: '/portal/assets/{name}',
    operationId: 'portalAsset',
    tag: 'Portal',
    summary: "The portal's stylesheet and script",
    auth: 'portalPublic',
    readsDatabase: false,
    success: { 200: { kind: 'asset', description: 'portal.css or portal.js.' } },
    errors: [404],
    handler: ({ params, res }) => {
      const asset = Object.hasOwn(ASSETS, params.name)
        ? ASSETS[params.name as keyof typeof ASSETS]
        : undefined;
      if (!asset) throw new HttpError(404, 'not_found', 'No such file.');
      let found = loaded.get(params.name);
      if (!found) {
        found = { type: asset.type, body: readFileSync(asset.file) };
        loaded.set(params.name, found);
      }
      res.setHeader('Cache-Control', 'no-cache');
      res.type(found.type).send(found.body);
    },
  }),
] as const;
