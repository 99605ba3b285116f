import { defineConfig } from 'tsup';

export default defineConfig({
  // `webhooks` is the edge entry (`@servicepay/node/webhooks`): Web Crypto only, nothing of Node's.
  entry: { index: 'src/index.ts', protocol: 'src/protocol/index.ts', webhooks: 'src/webhooks-edge.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node22',
  // Class names survive both builds: the CommonJS build lowers classes with static fields into expressions that
  // esbuild would name `_class2`, and an error's `constructor.name` is what a log shows.
  keepNames: true,
  // Shared chunks: the entries share one copy of the error classes and schemas, so an error thrown by
  // `@servicepay/node/webhooks` is `instanceof` the class imported from `@servicepay/node`.
  splitting: true,
});
