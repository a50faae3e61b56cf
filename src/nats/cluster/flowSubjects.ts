import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { Subject, isSubjectToken } from '../../actors/subjects.js';
import type { ResolvedFlow } from '../../flows/validateFlow.js';
import type { RunPlan } from '../../runtime/runPlan.js';
import type { RunMemory } from '../../runtime/runSession.js';
import type { ActorSubjects } from '../../runtime/transportActor.js';

/**
 * On NATS, the model's and the memory's node ids become subject tokens: refuses, with how to fix
 * it, a flow whose ids cannot be one (a dot, a space, a wildcard). Tool names are already tokens.
 */
export function checkSubjectTokens(flow: ResolvedFlow): void {
  for (const node of [flow.model, flow.memory]) {
    if (node && !isSubjectToken(node.id)) {
      throw new RedflowError(
        errorInfo(ErrorCode.NODE_CONFIG_INVALID, `node id "${node.id}" (${node.type}) cannot be part of a NATS subject`, {
          hint: 'in distributed mode, rename the node with letters, digits, _ and - only',
          path: `nodes[${node.id}]`,
        }),
      );
    }
  }
}

/**
 * Where a core worker's runs of `flow` reach their actors under `prefix`: the model (and the
 * verifier), the tools, the tool workers' live notes, and the memory of a run with a conversation.
 *
 * @example
 * ```ts
 * const { subjects, memoryOf } = runSubjects('redflow', flow, planRun(flow, baseDir));
 * ```
 */
export function runSubjects(prefix: string, flow: ResolvedFlow, plan: RunPlan): { subjects: ActorSubjects; memoryOf: (conversationId: string | undefined) => RunMemory | undefined } {
  const subjects: ActorSubjects = {
    model: Subject.model(prefix, flow.model.id),
    ...(plan.verifier && { verifier: Subject.model(prefix, plan.verifier.nodeId) }),
    tool: (name) => Subject.tool(prefix, name),
    // The tool workers say there where a call's work lives; the run logs it as tool.attached.
    live: (traceId) => Subject.runChunk(prefix, traceId),
  };
  const memoryOf = (conversationId: string | undefined): RunMemory | undefined =>
    plan.memory && conversationId !== undefined
      ? {
          loadSubject: Subject.memoryLoad(prefix, plan.memory.nodeId),
          appendSubject: Subject.memoryAppend(prefix, plan.memory.nodeId),
          conversationId,
          maxTurns: plan.memory.maxTurns,
        }
      : undefined;
  return { subjects, memoryOf };
}
