/**
 * The Runtime / Debug tab's lines about a wait: what the run waits for (an approval, a client
 * tool's result, a person's answer), since when, and until when (past the deadline it ends with
 * WAIT_EXPIRED, or escalates a question), with how long ago and how long left, kept current.
 */
import { useEffect, useState } from 'react';
import { describeWait, type RunWait } from '../../events/pendingWait.js';

/** How often the "ago" and "left" of a wait are brought up to date. */
const TICK_MS = 15_000;

/** A duration in words, to the minute (seconds under a minute). */
export function durationText(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), TICK_MS);
    return () => window.clearInterval(timer);
  }, []);
  return now;
}

/** The wait's lines, for the facts list (`<dl>`) of the Runtime / Debug tab. */
export function WaitFacts({ wait }: { readonly wait: RunWait }) {
  const now = useNow();
  const since = Date.parse(wait.since);
  const deadline = Date.parse(wait.deadline);
  const left = deadline - now;
  return (
    <>
      <dt>waits for</dt>
      <dd data-testid="run-wait" data-kind={wait.kind}>
        {describeWait(wait)}
      </dd>
      <dt>since</dt>
      <dd data-testid="run-wait-since" title={wait.since}>
        {new Date(since).toLocaleString()} <span className="muted">({durationText(now - since)} ago)</span>
      </dd>
      <dt>deadline</dt>
      <dd data-testid="run-wait-deadline" title={wait.deadline}>
        {new Date(deadline).toLocaleString()} <span className={left > 0 ? 'muted' : 'wait-facts__late'}>({left > 0 ? `${durationText(left)} left` : 'passed: it expires'})</span>
      </dd>
    </>
  );
}
