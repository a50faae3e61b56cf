import type { ModelActor } from '../model.js';

/**
 * `model` as an agent's verifier (`verification.model`, docs/verification.md): each answer says
 * which model it is (`answeredBy`, unless a fallback already said), so the run's
 * `verification.completed` records which model verified.
 *
 * @example
 * ```ts
 * serveActors({ model, verifier: { model: asVerifier(judge), id: 'judge' }, tools: [] });
 * ```
 */
export function asVerifier(model: ModelActor): ModelActor {
  const answeredBy = { provider: model.kind, model: model.model ?? model.kind };
  return {
    kind: model.kind,
    ...(model.model !== undefined && { model: model.model }),
    async complete(request, signal, options) {
      const answer = await model.complete(request, signal, options);
      return answer.answeredBy === undefined ? { ...answer, answeredBy } : answer;
    },
  };
}
