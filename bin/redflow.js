#!/usr/bin/env node
// The `redflow` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
