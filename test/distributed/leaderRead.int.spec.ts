import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kvm } from '@nats-io/kv';
import { lastStoredOn } from '../../src/nats/jetstream/storeRequests.js';
import { connectTestServer, uniquePrefix } from '../nats/natsSupport.js';

// A run's record confirmed by a core worker refused as a concurrent writer is read again through
// the bucket's leader (runLeases' `mine`): the read must give the entry's revision, so that the
// rewrite at that revision is refused only if someone wrote the record since.

const bucket = `${uniquePrefix().replace(/\./g, '-')}-leader-read`;
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connectTestServer('leader-read-test');
});

afterAll(async () => {
  await new Kvm(nc).open(bucket).then((kv) => kv.destroy()).catch(() => undefined);
  await nc.drain();
});

describe('a KV entry read through the stream leader', () => {
  it('should give the revision and value a KV read gives, an empty value once deleted, and null for a key never written', async () => {
    const kv = await new Kvm(nc).create(bucket, { history: 1 });
    await kv.put('t-1', new TextEncoder().encode('{"owner":"a"}'));
    const revision = await kv.put('t-1', new TextEncoder().encode('{"owner":"b"}'));
    const read = await lastStoredOn(nc, `KV_${bucket}`, `$KV.${bucket}.t-1`);
    expect(read?.seq).toBe(revision);
    expect(new TextDecoder().decode(read?.data)).toBe('{"owner":"b"}');
    // The rewrite at the revision read is taken; at the one before, refused.
    await expect(kv.update('t-1', new TextEncoder().encode('{"owner":"b"}'), revision - 1)).rejects.toThrow();
    await kv.update('t-1', new TextEncoder().encode('{"owner":"b"}'), read!.seq);
    await kv.delete('t-1');
    expect((await lastStoredOn(nc, `KV_${bucket}`, `$KV.${bucket}.t-1`))?.data.byteLength).toBe(0);
    expect(await lastStoredOn(nc, `KV_${bucket}`, `$KV.${bucket}.t-2`)).toBeNull();
  });
});
