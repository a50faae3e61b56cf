import { isValidConversationId } from '../actors/memory.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { admitRun } from '../host/admission.js';
import type { RunMemory } from '../runtime/runSession.js';
import type { AgentActors } from './agentActors.js';
import type { AgentRunRequest } from './agentHostTypes.js';

// What a message (or the editor's Run) asks an agent node for, checked before the run exists:
// its input, and the conversation whose memory it runs with.

/**
 * The input and memory of the run `request` asks for, once admitted: the input is there, within
 * the limits, and matches the input node's `inputSchema`.
 *
 * @throws RedflowError `RUN_INPUT_INVALID`, the admission's codes, or `MEMORY_KEY_INVALID`.
 */
export function admitRequest(ready: AgentActors, request: AgentRunRequest): { readonly input: unknown; readonly memory: RunMemory | undefined } {
  const { input } = request;
  if (input === undefined) {
    throw new RedflowError(errorInfo(ErrorCode.RUN_INPUT_INVALID, 'msg.payload is missing: it is the run\'s input', { hint: 'send the question (text or JSON) in msg.payload' }));
  }
  const { checkInput } = ready;
  admitRun({
    input,
    agent: ready.agent,
    tools: ready.tools,
    ...(checkInput !== undefined && {
      checkInput: (given: unknown) => {
        const verdict = checkInput(given);
        if (verdict === true) return;
        throw new RedflowError(
          errorInfo(ErrorCode.RUN_INPUT_INVALID, `msg.payload does not match the input node's inputSchema: ${verdict}`, {
            hint: 'see the redflow input node wired to the agent for what the input must look like',
          }),
        );
      },
    }),
  });
  return { input, memory: runMemory(ready, request.conversationId) };
}

/** The run's memory: the conversation named by `msg.conversationId`, when the agent has a memory node. */
export function runMemory(ready: AgentActors, conversationId: unknown): RunMemory | undefined {
  if (ready.memory === undefined || conversationId === undefined) return undefined;
  if (typeof conversationId !== 'string' || !isValidConversationId(conversationId)) {
    throw new RedflowError(
      errorInfo(ErrorCode.MEMORY_KEY_INVALID, `msg.conversationId ${JSON.stringify(conversationId)} is not a valid conversation id`, {
        hint: 'use 1–128 letters, digits, _, - or . (not starting with .)',
      }),
    );
  }
  return { ...ready.memory, conversationId };
}
