import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { openFileBrowser, type FileBrowser } from '../support/sharedChromium.js';

export type { FileBrowser };

// What the editor's browser tests share: Debian's Chromium (never a downloaded one), a real
// `redflow serve` process (the built CLI), and where screenshots go.

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, 'artifacts/screenshots');
/** The browser tests are left out only on purpose; CI installs Chromium (.ci/run). */
export const SKIP_BROWSER = process.env.REDFLOW_SKIP_BROWSER_TESTS === '1';
if (!SKIP_BROWSER && !existsSync(CHROMIUM)) {
  throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium), set CHROMIUM_PATH, or set REDFLOW_SKIP_BROWSER_TESTS=1`);
}

/**
 * The browser of one test file: pages (each in a context of its own) of the Chromium its test
 * process shares between the files it runs (test/support/sharedChromium.ts); `close()` closes this
 * file's pages only.
 */
export function openChromium(): Promise<FileBrowser> {
  return openFileBrowser(launchChromium);
}

/** Starts headless Chromium with the flags this closed network needs (no background connections). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Starts `redflow serve` on a free port and resolves with its URL once it prints it; `onStart` gets
 * the process to stop later. `runsDir` undefined: no `--runs` (with `--nats` in `extra`, the logs are in JetStream).
 */
export function startServe(flowsDir: string, runsDir: string | undefined, onStart: (child: ChildProcess) => void, extra: readonly string[] = []): Promise<string> {
  const runs = runsDir === undefined ? [] : ['--runs', runsDir];
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/redflow.js'), 'serve', '--port', '0', '--flows', flowsDir, ...runs, ...extra], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  onStart(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redflow serve printed no URL:\n${output}`)), 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /http:\/\/[\d.]+:\d+\//.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[0]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`redflow serve exited (${code}):\n${output}`)));
  });
}
