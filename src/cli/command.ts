import type { ExitCode } from './exitCodes.js';
import type { Output } from './output.js';

/** A subcommand of `redflow`. */
export interface Command {
  readonly name: string;
  readonly usage: string;
  run(args: readonly string[], output: Output): Promise<ExitCode>;
}
