import type { ModelActor } from '../model.js';

/**
 * A model actor whose code is loaded with its first call (`load`), so `import 'redflow'` and runs
 * of other models do not load a provider's streaming client: `kind` and `model` are known before.
 *
 * @example
 * ```ts
 * const model = lazyModel('openai', 'gpt-4o-mini', () => import('./openAiChatStream.js').then((m) => m.openAiChatStream(config)));
 * ```
 */
export function lazyModel(kind: string, model: string, load: () => Promise<ModelActor>): ModelActor {
  let loaded: Promise<ModelActor> | undefined;
  return {
    kind,
    model,
    complete: async (request, signal, options) => (await (loaded ??= load())).complete(request, signal, options),
  };
}
