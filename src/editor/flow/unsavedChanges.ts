/** Unsaved changes: asked about before they are discarded, by the editor or by leaving the page. */
import { useCallback, useEffect } from 'react';

/**
 * While `dirty`, leaving or reloading the page asks first (`beforeunload`). The returned function
 * asks before the editor itself discards the changes (opening another flow, New): true when there
 * is nothing to lose or the user agreed to lose it.
 */
export function useUnsavedChanges(dirty: boolean, flowId: string): () => boolean {
  useEffect(() => {
    if (!dirty) return undefined;
    const ask = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers ask only when returnValue is set.
      event.returnValue = '';
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [dirty]);
  return useCallback(() => !dirty || window.confirm(`${flowId || 'This flow'} has unsaved changes. Discard them?`), [dirty, flowId]);
}
