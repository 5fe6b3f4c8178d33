// Every error code of the service has one status, and the README's error table lists
// each of them with that status (the table people read is the table the code uses).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, ServiceError, type ErrorCode } from '../daemon/errors.ts';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

function readmeTable(): Map<string, number> {
  const section = README.slice(README.indexOf('## Error codes'));
  const rows = new Map<string, number>();
  for (const m of section.matchAll(/^\| (\d{3}) \| `([A-Z_]+)` \|/gm)) rows.set(m[2]!, Number(m[1]));
  return rows;
}

for (const [code, status] of Object.entries(ERROR_CODES) as Array<[ErrorCode, number]>) {
  test(`${code} is ${status}, in the README table, and renders as the error object`, () => {
    assert.equal(readmeTable().get(code), status, `README error table must list ${code} with ${status}`);
    const err = new ServiceError(code, 'something was wrong');
    assert.equal(err.statusCode, status);
    assert.deepEqual(JSON.parse(JSON.stringify(err)), { statusCode: status, errorCode: code, message: 'something was wrong' });
  });
}

test('the README lists no code the service does not have', () => {
  for (const code of readmeTable().keys()) assert.ok(code in ERROR_CODES, `${code} is in the README but not in daemon/errors.ts`);
});
