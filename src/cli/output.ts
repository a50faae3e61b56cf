import type { Writable } from 'node:stream';
import { redactSecrets } from '../secrets/secrets.js';

/** Where a command writes, and whether it may colour and redraw (a TTY). */
export interface Output {
  readonly out: Writable & { isTTY?: boolean };
  readonly err: Writable & { isTTY?: boolean };
  readonly color: boolean;
}

/** The real terminal; colour only on a TTY and when NO_COLOR is not set. */
export function terminalOutput(): Output {
  return { out: process.stdout, err: process.stderr, color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR };
}

/** ANSI styles that vanish when colour is off. */
export function styles(color: boolean) {
  const wrap = (code: string) => (text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
  return { dim: wrap('2'), bold: wrap('1'), red: wrap('31'), green: wrap('32'), yellow: wrap('33'), cyan: wrap('36') };
}

/** Writes one line, with every secret the process knows redacted (an answer, an error, a replayed log). */
export function line(stream: Writable, text = ''): void {
  stream.write(`${redactSecrets(text)}\n`);
}
