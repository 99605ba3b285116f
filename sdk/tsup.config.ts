import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', protocol: 'src/protocol/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  splitting: false,
  // Keep `node:crypto` as written: Node 20+ only, and bundlers for edge runtimes recognise the prefix.
  removeNodeProtocol: false,
});
