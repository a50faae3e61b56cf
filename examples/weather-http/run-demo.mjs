#!/usr/bin/env node
// `npm run demo:http`: starts the local weather API, runs the tool.http flow against it, stops it.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { startWeatherApi } from './weather-api.mjs';
import { main } from '../../dist/cli/main.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const server = await startWeatherApi();
try {
  process.exitCode = await main(['run', path.join(here, 'flow.json'), '--input', 'Should I take an umbrella in Paris today?', ...process.argv.slice(2)]);
} finally {
  server.close();
}
