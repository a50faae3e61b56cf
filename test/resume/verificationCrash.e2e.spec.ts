import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import type { AgentEvent } from '../../src/events/eventTypes.js';
import { readJsonlLog } from '../../src/events/jsonlEventStore.js';
import { fold } from '../../src/events/evolve.js';
import { codeBlocks, readPage } from '../docs/docPages.js';

// The verified agent of docs/verification.md (its first answer fails verification, the revised one
// passes), killed with SIGKILL after each event of its log and resumed: it ends as the
// uninterrupted run did, with the same steps. Runs the built CLI (npm test builds dist/ first).

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The built CLI in the test's folder (no model settings from this process's environment). */
const redflow = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: dir, env });

let dir: string;
let baseline: { stdout: string; events: AgentEvent[] };
const steps = (events: readonly AgentEvent[]) => events.filter((e) => e.type !== 'run.resumed').map((e) => e.type);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'redflow-verification-crash-'));
  await cp(path.join(root, 'examples/security-audit/tools'), path.join(dir, 'tools'), { recursive: true });
  await cp(path.join(root, 'examples/security-audit/code'), path.join(dir, 'code'), { recursive: true });
  const agent = codeBlocks(readPage('docs/verification.md')).find((block) => block.lang === 'markdown')?.code;
  await writeFile(path.join(dir, 'verified-finder.agent.md'), agent as string);
  const result = await redflow(['run', 'verified-finder.agent.md', '--log', 'base.jsonl', '--trace-id', 'verified']);
  expect(result.code, result.stderr).toBe(0);
  baseline = { stdout: result.stdout, events: [...(await readJsonlLog(path.join(dir, 'base.jsonl'))).events] as AgentEvent[] };
  expect(steps(baseline.events)).toContain('verification.completed');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a verified run killed with SIGKILL after each event, then resumed', () => {
  it('should end with the same outcome and the same steps from every kill point', async () => {
    for (let k = 1; k < baseline.events.length; k++) {
      const log = `kill-${k}.jsonl`;
      const killed = await redflow(['run', 'verified-finder.agent.md', '--log', log, '--trace-id', 'verified'], { REDFLOW_CRASH_AFTER_EVENT: String(k) });
      expect(killed.signal, `run killed after event ${k}`).toBe('SIGKILL');
      const resumed = await redflow(['resume', log]);
      expect(resumed.code, `resume after event ${k}: ${resumed.stderr}`).toBe(0);
      expect(resumed.stdout, `resume after event ${k}`).toBe(baseline.stdout);
      const events = [...(await readJsonlLog(path.join(dir, log))).events] as AgentEvent[];
      expect(steps(events), `resume after event ${k}`).toEqual(steps(baseline.events));
      expect(fold(events).observability.outcome, `resume after event ${k}`).toEqual(fold(baseline.events).observability.outcome);
    }
  }, 180_000);
});
