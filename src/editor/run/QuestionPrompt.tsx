/**
 * The prompt shown at the top of the side panel while the run on view waits for a person's answer
 * to the model's question (`escalate`, `request_info`): the question, why it is asked and its
 * context, a text field and Send (posted to `POST /api/runs/:traceId/answer`; the model reads the
 * answer as its next observation). It reads the wait from {@link WaitPromptContext}, so it shows
 * whichever node is selected, and nothing for other waits.
 */
import { useContext, useState, type FormEvent, type KeyboardEvent } from 'react';
import { WaitPromptContext, type WaitPromptState } from './WaitPrompt.js';

/** The longest answer the API takes (`schemas/http/answer-request.schema.json`). */
const ANSWER_MAX_CHARS = 100_000;

/** The question prompt, when the run on view waits for a person's answer. */
export function QuestionPrompt() {
  const state = useContext(WaitPromptContext);
  if (state?.wait.kind !== 'human' || state.wait.question === undefined) return null;
  // One prompt per question: the next question (or another run's) starts with an empty answer.
  return <Prompt key={`${state.wait.idempotencyKey}:${state.wait.seq}`} state={state} />;
}

function Prompt({ state }: { readonly state: WaitPromptState }) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [problem, setProblem] = useState<string>();
  const question = state.wait.question;
  if (question === undefined) return null;
  const blank = text.trim() === '';
  const send = (event?: FormEvent) => {
    event?.preventDefault();
    if (blank || sending) return;
    setSending(true);
    setProblem(undefined);
    state.actions.answer(text.trim()).catch((error: unknown) => {
      setProblem(error instanceof Error ? error.message : String(error));
      setSending(false);
    });
  };
  // Enter writes a new line; Ctrl+Enter (⌘+Enter) sends, as in chat apps with a multi-line field.
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) send();
  };
  const context = question.context === undefined ? undefined : typeof question.context === 'string' ? question.context : JSON.stringify(question.context);
  return (
    <form className="question-prompt" data-testid="question-prompt" data-action={question.action} onSubmit={send}>
      <div className="question-prompt__title">{question.action === 'escalate' ? 'The model escalates to a person' : 'The model asks for information'}</div>
      <p className="question-prompt__question" data-testid="question-prompt-question">
        {question.question}
      </p>
      {question.reason !== undefined && <p className="question-prompt__reason">Why: {question.reason}</p>}
      {context !== undefined && <pre className="question-prompt__context">{context}</pre>}
      <textarea
        className="question-prompt__answer"
        data-testid="question-prompt-answer"
        aria-label="your answer"
        placeholder="Your answer (the model reads it next)"
        rows={3}
        maxLength={ANSWER_MAX_CHARS}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="question-prompt__actions">
        <button type="submit" className="btn btn--primary" data-testid="question-prompt-send" disabled={blank || sending}>
          Send
        </button>
        <span className="question-prompt__deadline">until {new Date(state.wait.deadline).toLocaleString()}</span>
      </div>
      {problem && (
        <div className="question-prompt__problem" role="alert">
          {problem}
        </div>
      )}
    </form>
  );
}
