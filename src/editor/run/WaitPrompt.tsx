/**
 * The prompt a tool node shows while the run on view waits at it: for an approval, the call's input,
 * a reason and Approve / Deny (posted to `POST /api/runs/:traceId/approval`); for a tool the client
 * runs, its input and a field to give its result from here, as JSON output or as an error (posted
 * to `POST /api/runs/:traceId/tool-results`), to try a flow's client tools by hand. The app says
 * what the run waits for, at which node, through {@link WaitPromptContext}; a node outside the
 * wait shows nothing (a question to a person is asked by `QuestionPrompt`, in the side panel).
 */
import { createContext, useContext, useState } from 'react';
import type { RunWait } from '../../events/pendingWait.js';

/** How the prompts answer the wait; each rejects with the API's error (already answered, expired, …). */
export interface WaitActions {
  /** Approves or denies the call, with an optional reason. */
  readonly decide: (approved: boolean, reason: string | undefined) => Promise<void>;
  /** Answers the model's question. */
  readonly answer: (text: string) => Promise<void>;
  /** Gives the client tool's result: its output, or why it failed. */
  readonly sendResult: (result: ClientResult) => Promise<void>;
}

/** A client tool's result as the person gives it. */
export type ClientResult = { readonly ok: true; readonly output: unknown } | { readonly ok: false; readonly message: string };

/** The longest error message the API takes (`schemas/http/tool-result-request.schema.json`). */
const ERROR_MAX_CHARS = 4000;

/** The wait the run on view is in now, at which node, and how to answer it. */
export interface WaitPromptState {
  /** The tool node the run waits at; undefined for a question to a person (no tool's). */
  readonly nodeId: string | undefined;
  readonly wait: RunWait;
  readonly actions: WaitActions;
}

/** The current wait, provided by the app while a live run waits (undefined otherwise). */
export const WaitPromptContext = createContext<WaitPromptState | undefined>(undefined);

/** Longest input shown in the prompt before it is cut. */
const INPUT_CHARS = 160;

/** The prompt on tool node `nodeId`, when the run on view waits there. */
export function WaitPrompt({ nodeId }: { readonly nodeId: string }) {
  const state = useContext(WaitPromptContext);
  if (state === undefined || state.wait.kind === 'human' || state.nodeId !== nodeId) return null;
  // One prompt per wait: a new wait (the next call, another run) starts with an empty reason.
  return <Prompt key={`${state.wait.idempotencyKey}:${state.wait.seq}`} nodeId={nodeId} state={state} />;
}

function Prompt({ nodeId, state }: { readonly nodeId: string; readonly state: WaitPromptState }) {
  const [reason, setReason] = useState('');
  const [sending, setSending] = useState(false);
  const [problem, setProblem] = useState<string>();
  const { wait } = state;
  const input = JSON.stringify(wait.input);
  const shown = input.length > INPUT_CHARS ? `${input.slice(0, INPUT_CHARS)}…` : input;
  if (wait.kind === 'client') return <ClientResultForm nodeId={nodeId} state={state} input={input} shown={shown} />;
  const decide = (approved: boolean) => {
    setSending(true);
    setProblem(undefined);
    state.actions.decide(approved, reason.trim() === '' ? undefined : reason.trim()).catch((error: unknown) => {
      setProblem(error instanceof Error ? error.message : String(error));
      setSending(false);
    });
  };
  return (
    <div className="wait-prompt nodrag nopan nowheel" data-testid={`wait-prompt-${nodeId}`} data-kind="approval">
      <div className="wait-prompt__title">Approve this call?</div>
      <div className="wait-prompt__input rf-node__mono" title={input}>
        {shown}
      </div>
      <input
        className="wait-prompt__reason"
        data-testid="wait-prompt-reason"
        placeholder="reason (the model reads it on a denial)"
        value={reason}
        maxLength={1000}
        onChange={(event) => setReason(event.target.value)}
      />
      <div className="wait-prompt__actions">
        <button type="button" className="wait-prompt__approve" data-testid="wait-prompt-approve" disabled={sending} onClick={() => decide(true)}>
          Approve
        </button>
        <button type="button" className="wait-prompt__deny" data-testid="wait-prompt-deny" disabled={sending} onClick={() => decide(false)}>
          Deny
        </button>
      </div>
      {problem && (
        <div className="wait-prompt__problem" role="alert">
          {problem}
        </div>
      )}
      <div className="wait-prompt__deadline">until {new Date(wait.deadline).toLocaleString()}</div>
    </div>
  );
}

/** A client tool's call: its input, and its result typed here (JSON output, or an error's message). */
function ClientResultForm({ nodeId, state, input, shown }: { readonly nodeId: string; readonly state: WaitPromptState; readonly input: string; readonly shown: string }) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [problem, setProblem] = useState<string>();
  const blank = text.trim() === '';
  const send = (result: ClientResult) => {
    setSending(true);
    setProblem(undefined);
    state.actions.sendResult(result).catch((error: unknown) => {
      setProblem(error instanceof Error ? error.message : String(error));
      setSending(false);
    });
  };
  const sendOutput = () => {
    let output: unknown;
    try {
      output = JSON.parse(text) as unknown;
    } catch (error) {
      // Checked here, so a typo never reaches the model as the tool's output.
      setProblem(`Not JSON (${error instanceof Error ? error.message : String(error)}): quote text as a JSON string, or send it as an error.`);
      return;
    }
    send({ ok: true, output });
  };
  return (
    <div className="wait-prompt nodrag nopan nowheel" data-testid={`wait-prompt-${nodeId}`} data-kind="client">
      <div className="wait-prompt__title">Waits for its client’s result</div>
      <div className="wait-prompt__input rf-node__mono" title={input}>
        {shown}
      </div>
      <textarea
        className="wait-prompt__result rf-node__mono"
        data-testid="wait-prompt-result"
        aria-label="the tool's result"
        placeholder='its output as JSON, e.g. {"status": "shipped"}, or an error'
        rows={2}
        value={text}
        onChange={(event) => {
          setText(event.target.value);
          setProblem(undefined);
        }}
      />
      <div className="wait-prompt__actions">
        <button type="button" className="wait-prompt__approve" data-testid="wait-prompt-send-output" disabled={sending || blank} onClick={sendOutput}>
          Send output
        </button>
        <button
          type="button"
          className="wait-prompt__deny"
          data-testid="wait-prompt-send-error"
          disabled={sending || blank || text.trim().length > ERROR_MAX_CHARS}
          title="the model reads it as the tool's error (TOOL_FAILED)"
          onClick={() => send({ ok: false, message: text.trim() })}
        >
          Send error
        </button>
      </div>
      {problem && (
        <div className="wait-prompt__problem" role="alert" data-testid="wait-prompt-problem">
          {problem}
        </div>
      )}
      <div className="wait-prompt__deadline">until {new Date(state.wait.deadline).toLocaleString()}</div>
    </div>
  );
}
