import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FlowDefinition } from '../contracts/schema-types.js';
import { ErrorCode, RedflowError, errorInfo } from '../errors.js';
import { locateJsonSyntaxError } from '../files/jsonSyntaxError.js';
import { isNodeType } from '../flows/nodeTypes.js';
import { nodeRedOnlyDiagnostics } from '../flows/nodeRedOnly.js';
import { METADATA_ENV } from '../flows/nodeRed/flowMetadata.js';
import { nodeRedToRedflow } from '../flows/nodeRed/fromNodeRed.js';
import { parseNodeRedFlows } from '../flows/nodeRed/nodeRedFlows.js';
import { NODE_RED_TYPE_OF, redflowToNodeRed } from '../flows/nodeRed/toNodeRed.js';
import { help, parse, usageError } from './args.js';
import type { Command } from './command.js';
import { ExitCode } from './exitCodes.js';
import { line, styles } from './output.js';

const convertUsage = `usage: redflow convert <file.json> [--to node-red|redflow] [--tab <id|label>] [--into <flows.json>] [-o <file>]

Converts a Redflow flow file into Node-RED flows JSON (a tab with the agent and its capabilities,
one wire per edge, to import into Node-RED or deploy through its Admin API), or a tab of Node-RED
flows (an export, flows.json) into a Redflow flow file. Converted and back, a file is the same file:
what Node-RED's nodes cannot hold is kept in the tab's REDFLOW_FLOW env variable. Node-RED's own
nodes (an inject, a debug, a flow tool's body) are not part of a Redflow flow.
  --to <format>       node-red or redflow; default: the other format than the input's (a JSON
                      array is Node-RED flows, an object with "nodes" a Redflow flow)
  --tab <id|label>    to Redflow: the tab to convert when several hold Redflow nodes;
                      to Node-RED: the tab's id (default: the flow's id)
  --into <flows.json> to Node-RED: the flows to put the tab into, replacing the tab of that id and
                      keeping its Node-RED nodes and their wires; the output is then all the flows
  -o, --output <file> write the result there instead of stdout
Exit codes: 0 converted, 64 usage, 65 the input is not what it should be (not JSON, not a flow or
not Node-RED flows, no tab or several to pick, a connection string in the flow, a node id taken
by another tab), 66 a missing file.`;

/** `redflow convert`: Redflow flow files ⇄ Node-RED flows JSON. */
export const convert: Command = {
  name: 'convert',
  usage: convertUsage,
  async run(args, output) {
    const { values, positionals } = parse(
      args,
      { to: { type: 'string' }, tab: { type: 'string' }, into: { type: 'string' }, output: { type: 'string', short: 'o' } },
      convertUsage,
    );
    if (values.help) return help(output, convertUsage);
    const [file, ...extra] = positionals;
    if (file === undefined) throw usageError('which file? give a Redflow flow file or Node-RED flows JSON', convertUsage);
    if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, convertUsage);
    const to = values.to as string | undefined;
    if (to !== undefined && to !== 'node-red' && to !== 'redflow') throw usageError(`--to takes node-red or redflow, not "${to}"`, convertUsage);

    const input = await readJson(file);
    const isNodeRed = Array.isArray(input);
    const target = to ?? (isNodeRed ? 'redflow' : 'node-red');
    if (target === 'node-red' && isNodeRed) {
      throw new RedflowError(errorInfo(ErrorCode.FLOW_SCHEMA_MISMATCH, `${file} is Node-RED flows already (a JSON array), not a Redflow flow`, { hint: 'give a Redflow flow file (an object with "nodes" and "edges"), or --to redflow' }));
    }
    if (target === 'redflow' && !isNodeRed) {
      throw new RedflowError(errorInfo(ErrorCode.NODE_RED_FLOWS_INVALID, `${file} is not Node-RED flows (a JSON array of nodes)`, { hint: 'give the JSON Node-RED exports, or --to node-red to convert a Redflow flow file' }));
    }
    if (values.into !== undefined && target !== 'node-red') throw usageError('--into goes with a conversion to Node-RED', convertUsage);

    const s = styles(output.color);
    const warn = (text: string) => line(output.err, s.yellow(text));
    let result: unknown;
    if (target === 'node-red') {
      const doc = input as FlowDefinition;
      const existing = values.into === undefined ? undefined : parseNodeRedFlows(await readJson(values.into as string), values.into as string);
      result = redflowToNodeRed(doc, { ...(values.tab !== undefined && { tab: values.tab as string }), ...(existing !== undefined && { existing }) }).flows;
      for (const node of doc.nodes) {
        if (NODE_RED_TYPE_OF[node.type as keyof typeof NODE_RED_TYPE_OF] !== undefined) continue;
        const why = isNodeType(node.type) ? `Node-RED has no node for ${node.type}` : `${node.type} is no Redflow node type`;
        warn(`warning ${ErrorCode.NODE_RED_NODE_UNSUPPORTED}: node '${node.id}' is kept in the tab's ${METADATA_ENV} variable only: ${why}, so the agent in Node-RED does not have it`);
      }
    } else {
      const { flow } = nodeRedToRedflow(parseNodeRedFlows(input, file), values.tab === undefined ? {} : { tab: values.tab as string });
      result = flow;
      for (const diagnostic of nodeRedOnlyDiagnostics(flow)) warn(`warning ${diagnostic.code}: ${diagnostic.message}`);
    }

    const text = `${JSON.stringify(result, null, 2)}\n`;
    if (values.output === undefined) output.out.write(text);
    else {
      await writeFile(path.resolve(values.output as string), text);
      line(output.err, s.dim(`wrote ${values.output as string} (${target === 'node-red' ? 'Node-RED flows' : 'a Redflow flow file'})`));
    }
    return ExitCode.Ok;
  },
};

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new RedflowError(errorInfo(ErrorCode.FLOW_NOT_FOUND, `cannot read ${file}`, { hint: 'check the path' }));
  }
  try {
    return JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text) as unknown;
  } catch {
    const at = locateJsonSyntaxError(text);
    throw new RedflowError(errorInfo(ErrorCode.FLOW_INVALID_JSON, `${file} is not valid JSON${at ? ` at line ${at.line}, column ${at.column}: ${at.reason}` : ''}`));
  }
}
