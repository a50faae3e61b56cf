import { PAGE_REPORT_TYPE, type InspectorPageReport } from './bridgePage.js';

/**
 * What the relay knows of its pages: a page's report on the hosted inspector (the latest, `loaded`
 * first if any page loaded it), `loading` when a page is open but has not reported yet, `none`
 * when no page has opened.
 */
export type InspectorPageState = InspectorPageReport | 'loading' | 'none';

/** A page's report on the hosted inspector, when `message` is one (checked without parsing every message). */
export function pageReport(message: string): InspectorPageReport | undefined {
  if (!message.startsWith(`{"type":"${PAGE_REPORT_TYPE}"`)) return undefined;
  try {
    const { inspector } = JSON.parse(message) as { inspector?: unknown };
    return inspector === 'loaded' || inspector === 'unavailable' ? inspector : undefined;
  } catch {
    return undefined;
  }
}

/** What the relay's pages have said about the hosted inspector, and who waits to hear it. */
export function createPageWatch() {
  let opened = false;
  let report: InspectorPageReport | undefined;
  let stopped = false;
  const waiters = new Set<() => void>();
  const state = (): InspectorPageState => report ?? (opened ? 'loading' : 'none');
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  return {
    opened() {
      opened = true;
    },
    reported(next: InspectorPageReport) {
      // One page that shows the inspector is enough: a later page's trouble does not undo it.
      if (report !== 'loaded') report = next;
      wake();
    },
    stopped() {
      stopped = true;
      wake();
    },
    wait(timeoutMs?: number): Promise<InspectorPageState> {
      return new Promise((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const done = () => {
          waiters.delete(done);
          if (timer !== undefined) clearTimeout(timer);
          resolve(state());
        };
        if (report !== undefined || stopped) return done();
        waiters.add(done);
        if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs);
      });
    },
  };
}
