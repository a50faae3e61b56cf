/** The run panel's machine, with the API behind its actors (@xstate/react). */
import { useMachine } from '@xstate/react';
import { useMemo } from 'react';
import { fromPromise } from 'xstate';
import type { AgentEvent } from '../../events/eventTypes.js';
import type { RunResponse } from '../../server/apiTypes.js';
import type { ApiClient } from '../api/apiClient.js';
import { followRunStream } from './followRunStream.js';
import { runViewMachine } from './runViewMachine.js';

/**
 * {@link runViewMachine} with its actors backed by `api`, as `useMachine`'s `[snapshot, send, actor]`.
 * Memoised on `api`, so the machine is built once per client rather than on every render.
 */
export function useRunView(api: ApiClient) {
  const machine = useMemo(
    () =>
      runViewMachine.provide({
        actors: {
          startRun: fromPromise(async ({ input }: { input: { flowId: string; input: unknown } }) => {
            const started = await api.startRun({ flow: input.flowId, input: input.input });
            return { traceId: started.traceId };
          }),
          followRun: followRunStream((traceId) => api.streamUrl(traceId)),
          loadRun: fromPromise(async ({ input }: { input: { traceId: string } }) => {
            const [events, run] = await Promise.all([api.runEvents(input.traceId), api.getRun(input.traceId)]);
            return { events: events as readonly AgentEvent[], run: run as RunResponse | undefined };
          }),
          abortRun: fromPromise(async ({ input }: { input: { traceId: string } }) => {
            await api.abortRun(input.traceId, 'aborted from the editor');
          }),
        },
      }),
    [api],
  );
  return useMachine(machine);
}
