import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelActor, ModelRequest } from '../../src/actors/model.js';
import { createScriptedModel } from '../../src/actors/models/scriptedModel.js';
import { AgentExecutor } from '../../src/agents/agentExecutor.js';
import type { AgentDefinition } from '../../src/agents/agentDefinition.js';
import { loadAgentMarkdown } from '../../src/agents/agentMarkdownFile.js';
import { startFakeChatCompletionsServer, type FakeChatServer } from '../support/fakeChatCompletionsServer.js';

const EXAMPLE = path.resolve('examples/security-audit/security-audit.agent.md');

/** The verifier's answer: every check passed but those in `failing`, each with what it rests on. */
function verdict(failing: Record<string, string> = {}) {
  return {
    checks: ['completeness', 'consistency', 'correctness', 'constraints'].map((name) => ({
      name,
      passed: failing[name] === undefined,
      basis: failing[name] ?? `${name}: the analyze findings and the search results support the answer`,
    })),
  };
}

let runsDir: string;
let audit: AgentDefinition;
let answers: readonly unknown[];

beforeAll(async () => {
  runsDir = await mkdtemp(path.join(tmpdir(), 'verify-audit-'));
  const loaded = await loadAgentMarkdown(EXAMPLE);
  answers = loaded.modelConfig.answers as unknown[];
  // The seed's example with verification on: its Done Criteria feed the completeness check.
  audit = { ...loaded, runConfig: { ...loaded.runConfig, verification: 'self' } };
});
afterAll(async () => {
  await rm(runsDir, { recursive: true, force: true });
});

describe('the security-audit example with verification on', () => {
  it('should verify the final output against the done criteria and end done with the verification (scripted model)', async () => {
    const inner = createScriptedModel(answers, { verifications: { 3: verdict() } });
    const requests: ModelRequest[] = [];
    const model: ModelActor = { kind: inner.kind, complete: (request, signal, options) => (requests.push(request), inner.complete(request, signal, options)) };
    const result = await new AgentExecutor({ model, runsDir }).execute(audit);
    expect(result.outcome).toMatchObject({ status: 'done', reason: 'final_answer', verification: { passed: true, failures: 0 } });
    expect((result.output as { vulnerabilities: unknown[] }).vulnerabilities).toHaveLength(3);
    const verifier = requests.find((request) => request.purpose === 'verification');
    expect(verifier?.iteration).toBe(3);
    expect(verifier?.messages[0]?.content).toContain('Every finding of analyze is confirmed or ruled out by a search');
    // The verifier sees both observations (analyze's findings, search's result) and the output contract.
    expect(verifier?.messages[1]?.content).toMatch(/analyze\([\s\S]*search\([\s\S]*JSON Schema/);
  });

  describe('with a local model speaking the OpenAI Chat Completions wire protocol', () => {
    let openai: FakeChatServer;
    beforeAll(async () => {
      openai = await startFakeChatCompletionsServer();
    });
    afterAll(async () => {
      await openai?.stop();
    });

    it('should revise an answer that fails verification and end done once the revised one passes', async () => {
      const final = answers[2] as { output: { summary: string; vulnerabilities: unknown[] } };
      const partial = { ...final, output: { ...final.output, vulnerabilities: final.output.vulnerabilities.slice(0, 2) } };
      const reply = (content: unknown) => ({ kind: 'completion' as const, content: JSON.stringify(content) });
      openai.enqueue(
        reply(answers[0]),
        reply(answers[1]),
        reply(partial),
        reply(verdict({ completeness: 'the sql_injection finding of analyze (line 45) is neither reported nor ruled out' })),
        reply(final),
        reply(verdict()),
      );
      const definition: AgentDefinition = { ...audit, modelConfig: { provider: 'openai', baseUrl: openai.baseUrl, model: 'gpt-4o-mini', maxRetries: 0 } };
      const result = await new AgentExecutor({ runsDir, env: { OPENAI_API_KEY: 'sk-local-test' } }).execute(definition);
      expect(result.outcome).toMatchObject({ status: 'done', verification: { passed: true, failures: 1 } });
      expect((result.output as { vulnerabilities: unknown[] }).vulnerabilities).toHaveLength(3);
      expect(openai.requests).toHaveLength(6);
      const bodies = openai.requests.map((request) => request.body as { messages: { role: string; content: string }[] });
      // Request 4 is the verifier's, request 5 the revise turn, which shows the model the failed check.
      expect(bodies[3]?.messages[0]?.content).toMatch(/^You verify an agent's final answer/);
      expect(bodies[4]?.messages.at(-1)?.content).toContain('- completeness: the sql_injection finding of analyze (line 45) is neither reported nor ruled out');
    });
  });
});
