// The editor's build: `vite build --config src/editor/vite.config.ts` writes dist/editor (relative
// asset URLs, so `redflow serve` can serve it under any path). `npm run dev:editor` serves it with
// the API proxied to a running `redflow serve` (REDFLOW_API, default http://127.0.0.1:4800, redflow serve's default).
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/editor', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    fs: { allow: [projectRoot] },
    proxy: { '/api': { target: process.env.REDFLOW_API ?? 'http://127.0.0.1:4800', changeOrigin: true } },
  },
});
