/** A short message after an action (saved, could not load, …), at the bottom of the canvas. */
import { useEffect } from 'react';

/** A message for {@link Notice}. */
export interface NoticeMessage {
  /** `error` notices stay longer (10 s, against 3.5 s). */
  readonly tone: 'info' | 'error';
  readonly text: string;
  /** When it was said: changes with each notice, so the same text said twice restarts the timer. */
  readonly at: number;
}

/** Shows `notice` until it times out (calling `onDismiss`) or is replaced; renders nothing without one. */
export function Notice({ notice, onDismiss }: { notice: NoticeMessage | undefined; onDismiss: () => void }) {
  useEffect(() => {
    if (!notice) return;
    const timer = window.setTimeout(onDismiss, notice.tone === 'error' ? 10_000 : 3500);
    return () => window.clearTimeout(timer);
  }, [notice, onDismiss]);
  if (!notice) return null;
  return (
    <div className={`notice notice--${notice.tone}`} role="status" data-testid="notice" data-tone={notice.tone}>
      {notice.text}
    </div>
  );
}
