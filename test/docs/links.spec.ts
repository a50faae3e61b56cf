// Every relative link of the documentation (README.md and docs/*.md) leads somewhere: to a file or
// folder of the repository and, with an anchor, to a heading of that page.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, anchors, docPages, links, readPage } from './docPages.js';

describe('the links of the documentation', () => {
  it('should each point to a file of the repository, and to a heading of it when they name one', () => {
    const broken: string[] = [];
    for (const page of docPages()) {
      for (const { target, line } of links(readPage(page))) {
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // a web address
        const [file = '', anchor] = target.split('#');
        const resolved = file === '' ? page : path.join(path.dirname(page), decodeURIComponent(file));
        if (!existsSync(path.join(ROOT, resolved))) broken.push(`${page}:${line}: ${target} (no file ${resolved})`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(readPage(resolved)).has(anchor)) broken.push(`${page}:${line}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('should be checked: a link to a missing heading or file is found', () => {
    // The checker itself on a page made up here: it must see both faults.
    const page = '# A page\n\n## A section: `with code`\n\n[ok](#a-section-with-code) [bad](#nowhere) [gone](missing.md)\n\n```md\n[in code](#not-a-link)\n```\n';
    expect(anchors(page)).toEqual(new Set(['a-page', 'a-section-with-code']));
    expect(links(page).map((link) => link.target)).toEqual(['#a-section-with-code', '#nowhere', 'missing.md']);
  });
});
