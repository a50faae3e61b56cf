import { spawn } from 'node:child_process';

/**
 * Opens `url` in the desktop's default browser (`serve --open`, the inspector relay's page). A
 * machine without one (a server, CI) just goes on: the URL is printed anyway.
 */
export function openBrowser(url: string): void {
  const [command, args] =
    process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', url]] : ['xdg-open', [url]];
  try {
    const child = spawn(command as string, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser to open.
  }
}
