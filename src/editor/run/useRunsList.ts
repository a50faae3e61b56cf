/** The runs list's data: the open flow's runs (`GET /api/runs?flow=<id>`), or every run on request. */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { RunSummary } from '../../server/apiTypes.js';
import type { ApiClient } from '../api/apiClient.js';

/** What {@link useRunsList} gives the editor. */
export interface RunsListState {
  /** The runs shown, newest first. */
  readonly runs: readonly RunSummary[];
  /** Every run is shown, not only the open flow's. */
  readonly showAll: boolean;
  readonly setShowAll: (showAll: boolean) => void;
  /** Asks the server for the list again. */
  readonly refresh: () => Promise<void>;
}

/**
 * The runs of `flowId` (none for a flow never saved, which cannot have any), or all runs when
 * `showAll` is on; fetched again whenever either changes. `onError` hears a failed request.
 */
export function useRunsList(api: ApiClient, flowId: string | undefined, onError: (error: unknown) => void): RunsListState {
  const [runs, setRuns] = useState<readonly RunSummary[]>([]);
  const [showAll, setShowAll] = useState(false);
  // Only the latest request's answer is shown: switching flows quickly must not show the previous flow's runs.
  const latest = useRef(0);
  const refresh = useCallback(async () => {
    const request = ++latest.current;
    if (!showAll && flowId === undefined) {
      setRuns([]);
      return;
    }
    try {
      const { runs: found } = await api.listRuns(showAll ? undefined : flowId);
      if (request === latest.current) setRuns(found);
    } catch (error) {
      if (request === latest.current) onError(error);
    }
  }, [api, flowId, onError, showAll]);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  return { runs, showAll, setShowAll, refresh };
}
