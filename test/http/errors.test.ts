// Every error code of the service has one status, and the error table of docs/http-api.md
// lists each of them with that status (the table people read is the table the code uses).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, ServiceError, type ErrorCode } from '../../daemon/errors.ts';

const DOC = readFileSync(new URL('../../docs/http-api.md', import.meta.url), 'utf8');

function docTable(): Map<string, number> {
  const at = DOC.indexOf('## Error codes');
  assert.ok(at >= 0, 'docs/http-api.md has its "## Error codes" section');
  const section = DOC.slice(at);
  const rows = new Map<string, number>();
  for (const m of section.matchAll(/^\| (\d{3}) \| `([A-Z_]+)` \|/gm)) rows.set(m[2]!, Number(m[1]));
  return rows;
}

for (const [code, status] of Object.entries(ERROR_CODES) as Array<[ErrorCode, number]>) {
  test(`${code} is ${status}, in the error table of docs/http-api.md, and renders as the error object`, () => {
    assert.equal(docTable().get(code), status, `the error table of docs/http-api.md must list ${code} with ${status}`);
    const err = new ServiceError(code, 'something was wrong');
    assert.equal(err.statusCode, status);
    assert.deepEqual(JSON.parse(JSON.stringify(err)), { statusCode: status, errorCode: code, message: 'something was wrong' });
  });
}

test('docs/http-api.md lists no code the service does not have', () => {
  for (const code of docTable().keys()) assert.ok(code in ERROR_CODES, `${code} is in docs/http-api.md but not in daemon/errors.ts`);
});
