import type { Browser, BrowserContextOptions, Page } from 'playwright-core';

/**
 * One headless Chromium per test process, launched on first use and kept for the files that
 * process runs after it. The browser test files run in the `browser` project of vitest.config.ts,
 * which does not isolate its files: one fork runs several of them in turn, and each would otherwise
 * start (and wait for) a Chromium of its own. Each file gets a {@link FileBrowser}: its pages are
 * pages of the shared browser, each in a new context (no cookies, storage or cache shared with
 * another file or page), and closing it closes those contexts only. Playwright ends the browser
 * when the process exits.
 */

/** What a test file uses of a browser: new pages, and closing them all. */
export interface FileBrowser {
  /** A page in a context of its own. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /** Closes the contexts of this file's pages (the shared browser stays). */
  close(): Promise<void>;
}

let shared: Promise<Browser> | undefined;

/** This process's browser, launched by `launch` the first time (and again if it was closed or crashed). */
export async function sharedBrowser(launch: () => Promise<Browser>): Promise<Browser> {
  const current = shared ? await shared.catch(() => undefined) : undefined;
  if (current?.isConnected()) return current;
  shared = launch();
  return shared;
}

/** A {@link FileBrowser} on this process's shared browser. */
export async function openFileBrowser(launch: () => Promise<Browser>): Promise<FileBrowser> {
  const browser = await sharedBrowser(launch);
  const pages = new Set<Page>();
  return {
    async newPage(options) {
      // Browser.newPage: a new context that the page owns.
      const page = await browser.newPage(options);
      pages.add(page);
      return page;
    },
    async close() {
      const open = [...pages];
      pages.clear();
      await Promise.all(open.map((page) => page.context().close().catch(() => undefined)));
    },
  };
}
