#!/usr/bin/env node
// The `redflow` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
import { endQuietlyWhenOutputCloses } from '../dist/cli/closedOutput.js';
import { main } from '../dist/cli/main.js';

endQuietlyWhenOutputCloses();
process.exitCode = await main(process.argv.slice(2));
