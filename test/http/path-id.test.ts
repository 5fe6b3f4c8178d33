// A route's {id} (http/path-id.ts): the form the store gives ids, and nothing else, gets
// past it; anything else is the route's own "no such record" error, which does not repeat
// what the path held.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../daemon/errors.ts';
import { API_KEY_ID, OAUTH_GRANT_ID, pathId, SCOPED_TOKEN_ID, SESSION_ID, USER_ID, type IdKind } from '../../daemon/http/path-id.ts';
import { newId } from '../../daemon/store/records.ts';

const HEX = '0123456789abcdef01234567';

test("the ids the store makes pass; anything else is the route's not-found error without the text it was given", () => {
  const rows: Array<{ kind: IdKind; id: string; ok: boolean }> = [
    { kind: API_KEY_ID, id: `key_${HEX}`, ok: true },
    { kind: API_KEY_ID, id: newId('key'), ok: true },
    { kind: OAUTH_GRANT_ID, id: newId('ogr'), ok: true },
    { kind: SESSION_ID, id: newId('ses'), ok: true },
    { kind: SCOPED_TOKEN_ID, id: newId('sat'), ok: true },
    { kind: USER_ID, id: newId('usr'), ok: true },
    // Another kind's id, a wrong length, capitals, a missing or doubled prefix.
    { kind: API_KEY_ID, id: newId('ses'), ok: false },
    { kind: API_KEY_ID, id: `key_${HEX}0`, ok: false },
    { kind: API_KEY_ID, id: `key_${HEX.slice(1)}`, ok: false },
    { kind: API_KEY_ID, id: `key_${HEX.toUpperCase()}`, ok: false },
    { kind: API_KEY_ID, id: HEX, ok: false },
    { kind: API_KEY_ID, id: `key_key_${HEX.slice(4)}`, ok: false },
    { kind: SCOPED_TOKEN_ID, id: 'sat_nope', ok: false },
    { kind: USER_ID, id: '', ok: false },
    // What a path can carry once decoded: a line break with a forged line, an escape sequence, a NUL.
    { kind: SCOPED_TOKEN_ID, id: `sat_${HEX}\n2026-01-01T00:00:00.000Z  api_key.revoked  by admin`, ok: false },
    { kind: SCOPED_TOKEN_ID, id: `sat_${HEX.slice(0, 23)}\n`, ok: false },
    { kind: API_KEY_ID, id: `key_${HEX}\u001b[2J`, ok: false },
    { kind: SESSION_ID, id: `ses_${HEX.slice(0, 23)}\u0000`, ok: false },
    { kind: OAUTH_GRANT_ID, id: `ogr_${'a'.repeat(10_000)}`, ok: false },
  ];
  for (const { kind, id, ok } of rows) {
    const label = `${kind.prefix}: ${JSON.stringify(id.slice(0, 80))}`;
    if (ok) {
      assert.equal(pathId(id, kind), id, label);
      continue;
    }
    assert.throws(
      () => pathId(id, kind),
      (err: unknown) => {
        assert.ok(err instanceof ServiceError, label);
        assert.equal(err.errorCode, kind.code, label);
        assert.equal(err.statusCode, 404, label);
        assert.ok(!id || !err.message.includes(id), `${label}: the message does not repeat it`);
        assert.match(err.message, new RegExp(`"${kind.prefix}_" and 24 hexadecimal digits`), label);
        return true;
      },
      label,
    );
  }
});
