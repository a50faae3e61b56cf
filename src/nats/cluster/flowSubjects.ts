import { ErrorCode, RedflowError, errorInfo } from '../../errors.js';
import { isSubjectToken } from '../../actors/subjects.js';
import type { ResolvedFlow } from '../../flows/validateFlow.js';

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
