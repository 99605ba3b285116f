import { createServer, IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiServer } from '../api-server.ts';
import { messageClassesFor } from './message-classes.ts';

// V8's own answer to "do these two objects have the same hidden class"; the flag applies to code compiled after it.
setFlagsFromString('--allow-natives-syntax');
const haveSameHiddenClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
  a: object,
  b: object,
) => boolean;

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** Serves `app` (with or without the classes), sends a GET to each of `paths`, and returns what the app saw. */
async function serve(app: express.Express, withClasses: boolean, paths: string[]) {
  const seen: Array<{ req: IncomingMessage; res: ServerResponse }> = [];
  app.use((req, res, next) => {
    seen.push({ req, res });
    next();
  });
  app.get('/hello', (req, res) => {
    res.json({
      query: req.query,
      path: req.path,
      app: req.app === app,
      greeting: (req as { greeting?: string }).greeting,
    });
  });
  server = createServer(withClasses ? messageClassesFor(app) : {}, app);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const get = async (path: string) => {
    const response = await fetch(base + path);
    return { status: response.status, body: await response.json() };
  };
  const answers = [];
  for (const path of paths) answers.push(await get(path));
  return { seen, answers, get };
}

describe('messageClassesFor', () => {
  it("gives every request and response the app's prototypes from birth, so all of them share one hidden class", async () => {
    const app = express();
    const { seen } = await serve(app, true, ['/hello?a=1', '/hello?b=2', '/hello?c=3']);
    expect(seen).toHaveLength(3);
    for (const { req, res } of seen) {
      expect(Object.getPrototypeOf(req)).toBe(app.request);
      expect(Object.getPrototypeOf(res)).toBe(app.response);
      expect(haveSameHiddenClass(req, seen[0]?.req as object)).toBe(true);
      expect(haveSameHiddenClass(res, seen[0]?.res as object)).toBe(true);
    }
  });

  it('is what keeps them shared on Node 20 and 22: on the prototypes express gives on arrival, every request has a class of its own', async () => {
    const { seen } = await serve(express(), false, ['/hello?a=1', '/hello?b=2']);
    // V8 13 (Node 24) keeps one class across express's prototype swap by itself; V8 11 and 12 (Node 20, 22) give
    // each request its own, which is what the classes are for. Checked on 20.20, 22.23 and 24.21.
    const sharedAnyway = Number(process.versions.v8.split('.')[0]) >= 13;
    expect(haveSameHiddenClass(seen[0]?.req as object, seen[1]?.req as object)).toBe(sharedAnyway);
    expect(haveSameHiddenClass(seen[0]?.res as object, seen[1]?.res as object)).toBe(sharedAnyway);
  });

  it("keeps express's request and response as they were: its getters, res.json, req.app, and what the app adds to them", async () => {
    const app = express();
    app.set('query parser', 'simple');
    const { answers, get } = await serve(app, true, ['/hello?name=Ada']);
    // Added after the classes were made, as an app may: found through the classes' prototypes.
    Object.defineProperty(app.request, 'greeting', { get: () => 'hi', configurable: true });
    expect(answers).toEqual([{ status: 200, body: { query: { name: 'Ada' }, path: '/hello', app: true } }]);
    expect(await get('/hello')).toEqual({
      status: 200,
      body: { query: {}, path: '/hello', app: true, greeting: 'hi' },
    });
  });

  it('gives a second server of the same app the same classes, not another level of prototypes', () => {
    const app = express();
    const original = app.request;
    const first = messageClassesFor(app);
    expect(messageClassesFor(app)).toBe(first);
    expect(Object.getPrototypeOf(app.request)).toBe(original);
    expect(first.IncomingMessage.prototype).toBe(app.request);
  });

  it("is what the API server does for an express app it serves, before anything else sees the request; a bare listener keeps Node's classes", async () => {
    const options = { headersTimeoutMs: 5_000, requestTimeoutMs: 5_000, maxConnections: 10 };
    const arrived: IncomingMessage[] = [];
    const app = express();
    app.get('/hello', (_req, res) => {
      res.json({ ok: true });
    });
    // beforeApp runs in the server's own listener, before express: the prototype is already the app's there.
    server = createApiServer(app, {
      ...options,
      beforeApp: async (req) => {
        arrived.push(req);
        return false;
      },
    });
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const path of ['/hello?a=1', '/hello?b=2']) expect((await fetch(base + path)).status).toBe(200);
    expect(arrived.map((req) => Object.getPrototypeOf(req))).toEqual([app.request, app.request]);
    expect(haveSameHiddenClass(arrived[0] as object, arrived[1] as object)).toBe(true);
    server.close();

    const bare: IncomingMessage[] = [];
    server = createApiServer((req, res) => {
      bare.push(req);
      res.end('ok');
    }, options);
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
    expect((await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)).status).toBe(200);
    expect(bare[0]?.constructor).toBe(IncomingMessage);
  });
});
