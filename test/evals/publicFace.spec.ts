import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// `redflow/evals` is an entry of the package of its own (the root import is at its budget): what
// it exports is documented as the root's is, each name with an example.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const entry = path.join(root, 'src/evals/index.ts');

describe("the eval suites' entry ('redflow/evals')", () => {
  it('should document every name it exports, each with an example', () => {
    const program = ts.createProgram([entry], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true });
    const checker = program.getTypeChecker();
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry) as ts.SourceFile) as ts.Symbol;
    const names = checker.getExportsOfModule(module).map((exported) => {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      return { name: exported.getName(), doc: ts.displayPartsToString(symbol.getDocumentationComment(checker)), examples: symbol.getJsDocTags(checker).filter((tag) => tag.name === 'example').length };
    });
    expect(names.map(({ name }) => name)).toEqual(expect.arrayContaining(['runEvalSuite', 'scoreRun', 'addEvalCase', 'judgeReport', 'junitXml', 'reportHtml']));
    expect(names.filter(({ doc, examples }) => doc.trim() === '' || examples === 0).map(({ name }) => name)).toEqual([]);
  });
});
