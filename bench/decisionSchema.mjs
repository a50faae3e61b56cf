#!/usr/bin/env node
// The cost of compiling a flow's decision contract into the schema a provider holds the model to
// (`compileDecisionSchema`: one strict branch per allowed tool, plus final, escalate, request_info
// and delegate) and into native tool functions, for a flow with 20 tools, next to what a request
// pays once it is compiled (the cache hit by the contract's key). Run `npm run build` first.
// Prints µs per compilation (median of rounds). A model compiles each flow's schema once.
import { performance } from 'node:perf_hooks';
import { compileDecisionSchema, decisionSchemaFor } from '../dist/actors/models/decisionSchema.js';
import { decisionContractFor } from '../dist/runtime/answerRules.js';

const ROUNDS = 7;
const PER_ROUND = 2_000;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const tools = Array.from({ length: 20 }, (_, i) => ({
  name: `tool_${i}`,
  description: `tool number ${i}`,
  inputSchema: {
    type: 'object',
    required: ['id'],
    properties: {
      id: { type: 'string', minLength: 1 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      tags: { type: 'array', items: { type: 'string' } },
      filter: { type: 'object', properties: { status: { enum: ['open', 'closed'] }, since: { type: 'string', format: 'date' } } },
    },
  },
}));
const contract = decisionContractFor({ allowedTools: tools.map((tool) => tool.name), reasoning: 'explicit' }, tools);

const timed = (fn) => {
  const rounds = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = performance.now();
    for (let i = 0; i < PER_ROUND; i += 1) fn();
    rounds.push(((performance.now() - started) * 1000) / PER_ROUND);
  }
  return median(rounds);
};

const size = JSON.stringify(compileDecisionSchema(contract).schema).length;
console.log(`decision schema for 20 tools (explicit reasoning): ${size} characters`);
console.log(`compile: ${timed(() => compileDecisionSchema(contract)).toFixed(1)} µs`);
console.log(`cached (per request): ${timed(() => decisionSchemaFor(contract)).toFixed(2)} µs`);
