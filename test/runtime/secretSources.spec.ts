import { afterAll, describe, expect, it } from 'vitest';
import { natsConnectionOptions } from '../../src/nats/connect.js';
import { createOpenAiChatModel } from '../../src/actors/models/openAiChatModel.js';
import { createHttpTool } from '../../src/actors/tools/httpTool.js';
import { createRedflowServer } from '../../src/server/server.js';
import { redactSecrets } from '../../src/secrets/secrets.js';
import { tempDirs } from '../server/serverHarness.js';

// Whoever reads a secret tells the process, so that nothing it records or sends shows it: each
// source registers its value as it reads it.

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const shown = (secret: string) => redactSecrets(`value: ${secret}`);

describe('the places a process learns its secrets from', () => {
  it('should register the model\'s API key when the model is made', () => {
    const key = 'sk-source-model-1a2b3c4d';
    createOpenAiChatModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: key });
    expect(shown(key)).toBe('value: [redacted]');
  });

  it('should register a tool.http credential header (and its credentials after the scheme) when the tool is made', () => {
    createHttpTool({ name: 'api', url: 'http://127.0.0.1:9/x', headers: { 'x-api-key': 'hdr-source-5e6f7a8b', authorization: 'Basic c291cmNlOnBhc3N3b3Jk' } });
    expect(shown('hdr-source-5e6f7a8b')).toBe('value: [redacted]');
    expect(shown('c291cmNlOnBhc3N3b3Jk')).toBe('value: [redacted]');
  });

  it('should leave a header that is not a credential alone', () => {
    createHttpTool({ name: 'plain', url: 'http://127.0.0.1:9/x', headers: { 'x-tenant-name': 'acme-corporation' } });
    expect(shown('acme-corporation')).toBe('value: acme-corporation');
  });

  it('should register the NATS password and token when connection options are made', async () => {
    await natsConnectionOptions({ servers: '127.0.0.1:9', user: 'core', pass: 'nats-source-pass-9c0d' });
    await natsConnectionOptions({ servers: '127.0.0.1:9', token: 'nats-source-token-1e2f' });
    expect(shown('nats-source-pass-9c0d')).toBe('value: [redacted]');
    expect(shown('nats-source-token-1e2f')).toBe('value: [redacted]');
  });

  it('should register the serve token when the server starts', async () => {
    const token = 'serve-source-token-3a4b5c6d';
    const root = await dirs.make();
    const server = await createRedflowServer({ flowsDir: `${root}/flows`, runsDir: `${root}/runs`, editorDir: `${root}/editor`, port: 0, token, env: {} });
    try {
      expect(shown(token)).toBe('value: [redacted]');
    } finally {
      await server.close();
    }
  });
});
