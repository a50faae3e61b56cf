import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

// No Kubernetes runs here: these checks keep deploy/kubernetes/ honest without one.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: { args: string[]; env: { name: string; value?: string }[] }[] } } };
}

describe('deploy/kubernetes', () => {
  it('should run workers with commands redflow accepts, for a flow that validates, at three replicas on the NATS service', async () => {
    const documents = parseAllDocuments(await readFile(path.join(root, 'deploy/kubernetes/redflow.yaml'), 'utf8')).map((document) => document.toJS() as Deployment);
    expect(documents.map((document) => document.metadata.name)).toEqual(['redflow-core', 'redflow-models', 'redflow-tools']);
    for (const deployment of documents) {
      const [container] = deployment.spec.template.spec.containers;
      const env = Object.fromEntries((container?.env ?? []).map((variable) => [variable.name, variable.value]));
      expect(env.NATS_URL, deployment.metadata.name).toBe('nats://nats:4222');
      // The workers that create the stream and buckets ask for three replicas.
      expect(env.REDFLOW_REPLICAS, deployment.metadata.name).toBe(container?.args.includes('model') ? undefined : '3');
      const { stdout } = await run(process.execPath, [path.join(root, 'bin/redflow.js'), ...(container?.args ?? []), '--help'], { cwd: root });
      expect(stdout).toContain('usage: redflow worker');
      await run(process.execPath, [path.join(root, 'bin/redflow.js'), 'validate', container?.args[1] ?? ''], { cwd: root });
    }
  }, 30_000);

  it("should give the NATS chart three clustered servers with JetStream on volumes", async () => {
    const values = parse(await readFile(path.join(root, 'deploy/kubernetes/nats-values.yaml'), 'utf8')) as {
      config: { cluster: { enabled: boolean; replicas: number }; jetstream: { enabled: boolean; fileStore: { pvc: { size: string } } } };
    };
    expect(values.config.cluster).toEqual({ enabled: true, replicas: 3 });
    expect(values.config.jetstream.enabled).toBe(true);
    expect(values.config.jetstream.fileStore.pvc.size).toMatch(/Gi$/);
  });
});
