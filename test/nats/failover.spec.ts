import type { Server, ServerInfo } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { leastRecentlyDialled } from '../../src/nats/failover.js';

const server = (listen: string, lastConnect: number): Server => ({ listen, lastConnect }) as unknown as Server;
const info = { server_name: 'n1' } as ServerInfo;

describe('leastRecentlyDialled', () => {
  it('should dial the server tried longest ago, so the server just lost comes last', () => {
    // nats.js puts first the server it would pick: here the one it was connected to until now.
    const pool = [server('a:4222', 3000), server('b:4222', 1000), server('c:4222', 2000)];
    expect(leastRecentlyDialled(pool, info)?.listen).toBe('b:4222');
  });

  it('should dial a server never tried before any other', () => {
    const pool = [server('a:4222', 3000), server('b:4222', 1000), server('c:4222', 0)];
    expect(leastRecentlyDialled(pool, info)?.listen).toBe('c:4222');
  });

  it("should leave the first connect to nats.js's own choice", () => {
    expect(leastRecentlyDialled([server('a:4222', 0), server('b:4222', 0)], null)).toBeNull();
  });
});
