import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNothingLost, startFaultSuite, type FaultSuite } from './faultSuite.js';
import { allStreamsSettled, streamLeader } from './natsCluster.js';

// The fault suite (faultSuite.ts): a real three-server NATS cluster on this machine, every stream
// with three replicas, real `redflow worker` processes, and a steady load of runs while one fault
// at a time is injected — kill -9, SIGSTOP, a rolling restart, a core worker killed during an
// election. After each: every run whose start was acknowledged ends, every log replays whole
// (seqs 1..n, one ending, no problem), no tool call is executed twice, and the time to recover is
// reported. The figures are printed (docs/cluster.md keeps them). REDFLOW_FAULTS=long runs the
// long profile: a heavier load (hundreds of runs in flight), longer faults, each fault twice.
// Partitions (a dropped link, not a process fault) are in clusterPartitions.e2e.spec.ts.
const LONG = process.env.REDFLOW_FAULTS === 'long';
const profile = LONG
  ? { everyMs: 10, inFlight: 300, warmupMs: 3000, settleMs: 3000, downMs: 8000, pauseMs: 12_000, rounds: 2, settleWithinMs: 120_000 }
  : { everyMs: 120, inFlight: 32, warmupMs: 800, settleMs: 800, downMs: 3000, pauseMs: 7000, rounds: 1, settleWithinMs: 30_000 };

let suite: FaultSuite;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  suite = await startFaultSuite(profile);
}, 60_000);

afterAll(async () => {
  await suite?.close();
});

describe(`a three-server NATS cluster under faults (${LONG ? 'long' : 'short'} profile)`, () => {
  it('should end every acknowledged run whole when the trace stream leader is killed (kill -9) and restarted', async () => {
    for (let round = 0; round < profile.rounds; round++) {
      const result = await suite.underLoad(`kill -9 stream leader #${round + 1}`, async () => {
        const leader = await streamLeader(suite.client, suite.stream);
        await suite.cluster.kill(leader);
        await sleep(profile.downMs);
        await suite.cluster.start(leader);
      });
      expectNothingLost(result);
    }
  }, LONG ? 600_000 : 180_000);

  it('should end every acknowledged run whole when the stream leader is paused (SIGSTOP) past the election timeout', async () => {
    for (let round = 0; round < profile.rounds; round++) {
      const result = await suite.underLoad(`SIGSTOP stream leader #${round + 1}`, async () => {
        const leader = await streamLeader(suite.client, suite.stream);
        suite.cluster.pause(leader);
        await sleep(profile.pauseMs);
        suite.cluster.resume(leader);
      });
      expectNothingLost(result);
    }
  }, LONG ? 600_000 : 180_000);

  it('should end every acknowledged run whole through a rolling restart of the three servers', async () => {
    const result = await suite.underLoad('rolling restart', async () => {
      for (const server of suite.cluster.servers) {
        await suite.cluster.restart(server.name);
        await suite.cluster.ready();
        await allStreamsSettled(suite.client, profile.settleWithinMs);
      }
    });
    expectNothingLost(result);
  }, LONG ? 600_000 : 180_000);

  it('should end every acknowledged run whole when a core worker is killed (kill -9) during a leader election', async () => {
    const result = await suite.underLoad('kill -9 core worker during election', async () => {
      const leader = await streamLeader(suite.client, suite.stream);
      const [doomed] = suite.coreWorkers;
      await suite.cluster.kill(leader);
      doomed!.child.kill('SIGKILL');
      await doomed!.ended;
      await sleep(profile.downMs);
      await suite.cluster.start(leader);
      await allStreamsSettled(suite.client, profile.settleWithinMs);
      suite.coreWorkers = [suite.coreWorkers[1]!, await suite.worker('core', 2)];
    });
    expectNothingLost(result);
    expect(result.takenOver, 'the killed worker left runs to take over').toBeGreaterThan(0);
  }, LONG ? 600_000 : 180_000);
});
