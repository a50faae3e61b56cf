/** The errors a write gets once the reading end of the process's stdout or stderr is gone. */
const CLOSED_READER: ReadonlySet<string> = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

/**
 * Ends the process quietly when whoever reads its stdout or stderr has gone (`redflow replay log |
 * head -1`): with the exit code set so far (0 unless a command set one), as a pipe's reader
 * closing early is not a failure. Node ignores SIGPIPE, so otherwise the next write's EPIPE is an
 * unhandled 'error' event and a stack trace. Any other write error is left to crash as before.
 *
 * @example
 * ```ts
 * endQuietlyWhenOutputCloses();
 * process.exitCode = await main(process.argv.slice(2));
 * ```
 */
export function endQuietlyWhenOutputCloses(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === undefined || !CLOSED_READER.has(error.code)) throw error;
      process.exit(process.exitCode ?? 0);
    });
  }
}
