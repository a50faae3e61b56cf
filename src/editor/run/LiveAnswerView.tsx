/**
 * The model's answer while a run is under way, shown on the model node and in the Runtime / Debug
 * tab: the text as it streams (`writing`), then the answer as logged (`logged`) until the model is
 * asked again. The app provides it through {@link LiveAnswerContext} only while it follows a run
 * live, so a finished or scrubbed run shows none.
 */
import { createContext, useContext, useEffect, useRef } from 'react';
import type { ShownAnswer } from './liveAnswer.js';

/** The answer to show now; undefined when no run is followed live or the model has not answered yet. */
export const LiveAnswerContext = createContext<ShownAnswer | undefined>(undefined);

/** How much of a long answer the model node shows: its end, where the model is writing. */
const NODE_TAIL_CHARS = 160;

function captionOf(answer: ShownAnswer): string {
  return answer.state === 'writing' ? `writing… (iteration ${answer.iteration})` : `answered (iteration ${answer.iteration})`;
}

/** Above the model node `nodeId`: the end of the answer being written, or the answer just logged. */
export function LiveAnswerOnNode({ nodeId }: { readonly nodeId: string }) {
  const answer = useContext(LiveAnswerContext);
  if (answer === undefined) return null;
  const tail = answer.text.length > NODE_TAIL_CHARS ? `…${answer.text.slice(-NODE_TAIL_CHARS)}` : answer.text;
  return (
    <div className={`live-answer live-answer--node live-answer--${answer.state}`} data-testid={`live-answer-${nodeId}`} data-state={answer.state} data-iteration={answer.iteration}>
      <div className="live-answer__caption">{captionOf(answer)}</div>
      {/* Bottom-aligned: when the text is taller than the box, its end (where the model writes) shows. */}
      <div className="live-answer__clip">
        <span className="live-answer__text rf-node__mono">{tail}</span>
      </div>
    </div>
  );
}

/** In the Runtime / Debug tab: the whole answer, kept scrolled to its end while it is written. */
export function LiveAnswerPanel() {
  const answer = useContext(LiveAnswerContext);
  const text = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const element = text.current;
    if (element) element.scrollTop = element.scrollHeight;
  }, [answer?.text]);
  if (answer === undefined) return null;
  return (
    <section className={`live-answer live-answer--panel live-answer--${answer.state}`} data-testid="run-live-answer" data-state={answer.state} data-iteration={answer.iteration}>
      <h4 className="section-title">Model answer</h4>
      <div className="live-answer__caption">{captionOf(answer)}</div>
      <pre ref={text} className="live-answer__text">
        {answer.text}
      </pre>
    </section>
  );
}
