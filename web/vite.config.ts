// The web console's build (README.md "Web console"): static assets under web/dist, served at /console/ by the
// local server and by the CDN from the bucket's console/ prefix. Preact's JSX through Vite's own transform.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One small CSS file and hashed chunks; no inline script or style, so the CSP needs no exception.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    reportCompressedSize: false,
    rolldownOptions: {
      // The share page's password form (lib/http/share-page.ts SHARE_ALTCHA_SCRIPT) names its entry by a
      // fixed name, cached a year like the rest: give it a new number whenever its code or altcha changes.
      input: { index: 'index.html', 'share-altcha-1': 'src/share-altcha.ts' },
      output: {
        entryFileNames: (chunk) =>
          chunk.name.startsWith('share-altcha') ? '[name].js' : 'assets/[name]-[hash].js',
      },
    },
  },
});
