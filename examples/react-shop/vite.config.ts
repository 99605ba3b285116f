import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// A plain production build into dist/, served by server/main.ts (the Express shop's backend) under the spec's
// CSP: the bundle is one module script from the shop's own origin, so nothing inline is needed.
export default defineConfig({
  plugins: [react()],
  resolve: {
    // In this repository @servicepay/react is compiled from its source; in your app it is installed (its README).
    alias: {
      '@servicepay/react': fileURLToPath(new URL('../../widget/react/src/index.ts', import.meta.url)),
    },
  },
  build: { outDir: 'dist', emptyOutDir: true },
  logLevel: 'warn',
});
