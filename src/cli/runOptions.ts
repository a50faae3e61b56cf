import { allowFilesOptionSpec } from './allowFilesOption.js';

/**
 * The flags `redflow run` and `redflow fork` share, declared once: where the run's log goes
 * (`--log`), JSON output (`--json`), scripted model answers (`--script`), the run's time limit
 * (`--timeout`) and the folders its flow's files may be in (`--allow-files`).
 *
 * @example
 * ```ts
 * const { values } = parse(args, { at: { type: 'string' }, ...runOptionSpecs }, forkUsage);
 * ```
 */
export const runOptionSpecs = {
  log: { type: 'string' },
  json: { type: 'boolean' },
  script: { type: 'string' },
  timeout: { type: 'string' },
  ...allowFilesOptionSpec,
} as const;
