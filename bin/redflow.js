#!/usr/bin/env node
// The `redflow` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
import module from 'node:module';

// Node 22.1+ keeps V8's compiled code of the CLI's modules between runs (in the OS's temporary
// folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a demo run starts about a tenth faster. The
// modules are imported after it, so they are compiled through it.
module.enableCompileCache?.();
const { endQuietlyWhenOutputCloses } = await import('../dist/cli/closedOutput.js');
const { main } = await import('../dist/cli/main.js');

endQuietlyWhenOutputCloses();
process.exitCode = await main(process.argv.slice(2));
