import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connect.js';
import { createServerNetwork, netnsUnavailable, type ServerNetwork } from '../distributed/netns.js';
import { startNatsCluster, type NatsCluster } from '../distributed/natsCluster.js';

// A client of connectNats whose server is cut off by a network partition (its link dropped in
// its network namespace: the server runs on, the TCP connection stays open and silent) must
// reconnect to another server of its list while the partition lasts — even when it has more to
// send than the kernel's buffer holds, which is where nats.js alone waited for the dead link.
// Needs root (network namespaces); skipped, with the reason, otherwise.
const unavailable = netnsUnavailable();
const PARTITION_MS = 20_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let network: ServerNetwork | undefined;
let cluster: NatsCluster | undefined;

/** Cuts off `nc`'s server for the partition and says which server `nc` reconnected to meanwhile, if any. */
async function reconnectedDuringPartition(nc: NatsConnection): Promise<string | undefined> {
  const cut = nc.info!.server_name;
  let reconnectedTo: string | undefined;
  void (async () => {
    for await (const status of nc.status()) if (status.type === 'reconnect') reconnectedTo ??= nc.info?.server_name;
  })();
  cluster!.isolate(cut);
  for (let waited = 0; waited < PARTITION_MS && reconnectedTo === undefined; waited += 200) await sleep(200);
  cluster!.heal(cut);
  await cluster!.ready();
  return reconnectedTo;
}

describe.skipIf(unavailable !== undefined)(`a NATS client when its server is cut off by a partition${unavailable ? `: skipped, ${unavailable}` : ''}`, () => {
  beforeAll(async () => {
    network = createServerNetwork(3);
    cluster = await startNatsCluster({ network });
  }, 60_000);

  afterAll(async () => {
    await cluster?.close();
    network?.remove();
  });

  it('should reconnect to another server while the partition lasts when it is idle', async () => {
    const nc = await connectNats({ servers: cluster!.urls.split(','), name: 'idle-client' });
    try {
      const cut = nc.info!.server_name;
      const reconnectedTo = await reconnectedDuringPartition(nc);
      expect(reconnectedTo).toBeDefined();
      expect(reconnectedTo).not.toBe(cut);
    } finally {
      await nc.close();
    }
  }, 60_000);

  it('should reconnect to another server while the partition lasts when it has more to send than the link takes', async () => {
    const nc = await connectNats({ servers: cluster!.urls.split(','), name: 'busy-client' });
    let sending = true;
    const payload = new Uint8Array(64 * 1024);
    const sender = (async () => {
      while (sending) {
        try {
          nc.publish('partition.busy', payload);
        } catch {
          // Closed or reconnecting: nats.js buffers or refuses, either is fine here.
        }
        await sleep(5);
      }
    })();
    try {
      const cut = nc.info!.server_name;
      const reconnectedTo = await reconnectedDuringPartition(nc);
      expect(reconnectedTo).toBeDefined();
      expect(reconnectedTo).not.toBe(cut);
    } finally {
      sending = false;
      await sender;
      await nc.close();
    }
  }, 60_000);
});
