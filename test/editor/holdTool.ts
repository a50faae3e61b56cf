// A tool for the editor's browser tests that stays under way until the test lets it go.
import path from 'node:path';

/** The source of `hold`, a tool.module tool that waits while `holdFile` exists (and stops when its call is aborted). */
export const holdTool = (holdFile: string) => `// Waits while ${path.basename(holdFile)} exists.
import { existsSync } from 'node:fs';
export default {
  name: 'hold',
  description: 'Waits for the test',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  async execute(_input, { signal }) {
    while (existsSync(${JSON.stringify(holdFile)})) {
      if (signal.aborted) throw new Error('aborted');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { released: true };
  },
};
`;
