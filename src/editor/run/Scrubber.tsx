/** Steps through a run's log: a range input over its events; everything else follows its position. */
import type { RunStep } from '../../machines/runSteps.js';

/** The scrubber's props. */
export interface ScrubberProps {
  /** The run's steps, one per event of its log. */
  readonly steps: readonly RunStep[];
  /** The viewed step (-1 when there are none). */
  readonly index: number;
  /** Called with the step to view, already kept within the steps. */
  readonly onScrub: (position: number) => void;
}

/** Previous / next buttons and a slider over a run's steps, with the viewed event and the state it led to. */
export function Scrubber({ steps, index, onScrub }: ScrubberProps) {
  const step = steps[index];
  const last = steps.length - 1;
  return (
    <div className="scrubber" data-testid="scrubber-bar">
      <button type="button" className="btn btn--small" onClick={() => onScrub(Math.max(0, index - 1))} disabled={index <= 0} data-testid="scrub-prev" aria-label="previous event">
        ◀
      </button>
      <input
        type="range"
        min={0}
        max={Math.max(0, last)}
        step={1}
        value={Math.max(0, index)}
        onChange={(event) => onScrub(Number(event.target.value))}
        data-testid="scrubber"
        aria-label="event"
      />
      <button type="button" className="btn btn--small" onClick={() => onScrub(Math.min(last, index + 1))} disabled={index >= last} data-testid="scrub-next" aria-label="next event">
        ▶
      </button>
      <span className="scrubber__label" data-testid="scrubber-label">
        {step ? (
          <>
            event <strong>{step.event.seq}</strong>/{steps.length} · <code>{step.event.type}</code> · iteration {step.event.iteration} → <strong>{step.state}</strong>
          </>
        ) : (
          'no events'
        )}
      </span>
    </div>
  );
}
