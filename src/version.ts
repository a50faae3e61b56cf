import { createRequire } from 'node:module';

/** This package's version, from its package.json: what `--version`, the API and the NATS micro services report. */
export const redflowVersion: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
