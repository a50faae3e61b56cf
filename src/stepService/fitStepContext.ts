import { type ContextSection, SectionKind, type StepContext, renderContext } from './workspaceContext.js';

/** Which sections go first when the window is short: search results, then the focused file, pins, tagged files. */
const DROP_ORDER: readonly SectionKind[] = [SectionKind.vector, SectionKind.implicit, SectionKind.pinned, SectionKind.explicit];

/**
 * Keeps a step's context within `maxTokens`: leaves out whole sections, least important first
 * (and within a kind, the last one first), each with a note saying so.
 *
 * @example
 * ```ts
 * const fitted = fitStepContext(context, 2_000, countTokens);
 * const text = renderContext(fitted);
 * ```
 */
export function fitStepContext(context: StepContext, maxTokens: number, countTokens: (text: string) => number): StepContext {
  const fits = (candidate: StepContext) => countTokens(renderContext(candidate) ?? '') <= maxTokens;
  if (fits(context)) return context;
  const kept: ContextSection[] = [...context.sections];
  const notes = [...context.notes];
  const order = DROP_ORDER.flatMap((kind) =>
    kept
      .filter((section) => section.kind === kind)
      .reverse(),
  );
  for (const section of order) {
    kept.splice(kept.indexOf(section), 1);
    notes.push(`${section.title} left out to fit the context window`);
    if (fits({ sections: kept, notes })) break;
  }
  return { sections: kept, notes };
}
