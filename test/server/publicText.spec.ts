import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, errorInfo } from '../../src/errors.js';
import { HIDDEN_ADDRESS, publicErrorInfo, publicText } from '../../src/server/publicText.js';

describe('publicText', () => {
  it('cuts the server\'s absolute paths to their last segment, keeping JSON pointers and API routes', () => {
    const log = path.join(os.tmpdir(), 'redflow-x', 'runs', 's-q1.jsonl');
    expect(publicText(`cannot append to ${log}: a torn record`)).toBe('cannot append to …/s-q1.jsonl: a torn record');
    expect(publicText(`open '${path.join(process.cwd(), 'flows')}'`)).toBe("open '…/flows'");
    expect(publicText('C:\\Users\\ops\\runs\\a.jsonl is locked')).toBe('…/a.jsonl is locked');
    expect(publicText('/user_api_keys/llmKey must NOT have fewer than 20 characters')).toBe('/user_api_keys/llmKey must NOT have fewer than 20 characters');
    expect(publicText('no API route GET /api/nope; see /api/runs/<traceId>')).toBe('no API route GET /api/nope; see /api/runs/<traceId>');
    expect(publicText('give a relative path such as runs/x.jsonl')).toBe('give a relative path such as runs/x.jsonl');
  });

  it('hides addresses, keeping the punctuation after them and the templates of a hint', () => {
    expect(publicText('http://10.0.0.5:8000/v1 did not answer')).toBe(`${HIDDEN_ADDRESS} did not answer`);
    expect(publicText('Check baseUrl (https://llm.internal.example/v1): the API root.')).toBe(`Check baseUrl (${HIDDEN_ADDRESS}): the API root.`);
    expect(publicText('nats://user@10.1.2.3:4222, then file:///srv/x.json.')).toBe(`${HIDDEN_ADDRESS}, then ${HIDDEN_ADDRESS}.`);
    expect(publicText('open the editor at http://127.0.0.1:<port>/')).toBe('open the editor at http://127.0.0.1:<port>/');
  });

  it('says whether an error lost anything, so its full text can be logged', () => {
    const plain = publicErrorInfo(errorInfo(ErrorCode.RUN_NOT_FOUND, 'no run abc', { path: '/traceId' }));
    expect(plain).toEqual({ info: errorInfo(ErrorCode.RUN_NOT_FOUND, 'no run abc', { path: '/traceId' }), withheld: false });
    const file = path.join(os.tmpdir(), 'runs', 'abc.jsonl');
    const hidden = publicErrorInfo(errorInfo(ErrorCode.LOG_RECORD_CORRUPT, `bad ${file}`, { path: file, hint: 'see http://10.0.0.5/x', retryable: true }));
    expect(hidden).toEqual({ info: errorInfo(ErrorCode.LOG_RECORD_CORRUPT, 'bad …/abc.jsonl', { path: '…/abc.jsonl', hint: `see ${HIDDEN_ADDRESS}`, retryable: true }), withheld: true });
  });
});
