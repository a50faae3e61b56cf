// The editor's build: `vite build --config src/editor/vite.config.ts` writes dist/editor (relative
// asset URLs, so `redflow serve` can serve it under any path). `npm run dev:editor` serves it with
// the API proxied to a running `redflow serve` (REDFLOW_API, default http://127.0.0.1:4800, redflow serve's default).
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { configValidators } from './configValidatorsPlugin.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  plugins: [react(), configValidators(fileURLToPath(new URL('../../schemas', import.meta.url)))],
  build: {
    outDir: fileURLToPath(new URL('../../dist/editor', import.meta.url)),
    emptyOutDir: true,
    // The entry holds the editor's own code; the libraries it always needs are chunks of their
    // own (loaded in parallel with it, and cached across releases that do not change them); what
    // only a click needs (the Stately inspector) is imported when clicked.
    chunkSizeWarningLimit: 400,
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'react', test: /[\\/]node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            { name: 'xyflow', test: /[\\/]node_modules[\\/](@xyflow|d3-[a-z]+|classcat|zustand|use-sync-external-store)[\\/]/ },
            { name: 'xstate', test: /[\\/]node_modules[\\/](xstate|@xstate)[\\/]/ },
            // The layout library of the flow's auto layout and the statechart panel.
            { name: 'dagre', test: /[\\/]node_modules[\\/]@dagrejs[\\/]/ },
            // The node configs' validators, generated from the schemas (configValidatorsPlugin.ts):
            // they change only with the schemas, not with the editor's code.
            { name: 'config-validators', test: /virtual:redflow\/config-validators/ },
          ],
        },
      },
    },
  },
  server: {
    fs: { allow: [projectRoot] },
    proxy: { '/api': { target: process.env.REDFLOW_API ?? 'http://127.0.0.1:4800', changeOrigin: true } },
  },
});
