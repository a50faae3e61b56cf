/** A short message after an action (saved, could not load, …), at the bottom of the canvas. */
import { useEffect } from 'react';

export interface NoticeMessage {
  readonly tone: 'info' | 'error';
  readonly text: string;
  readonly at: number;
}

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
