import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { TokenSeal, tokenOwner } from '../../daemon/auth/sealed-token.ts';

test('a sealed token opens for its owner under the same secret, and for nobody else', () => {
  const secret = randomBytes(32);
  const seal = new TokenSeal(secret);
  const owner = tokenOwner('usr_1', 'gh');
  const sealed = seal.seal('gho_secret-token', owner);
  assert.ok(!sealed.includes('gho_secret-token'));
  assert.notEqual(seal.seal('gho_secret-token', owner), sealed, 'a fresh nonce each time');
  assert.equal(seal.open(sealed, owner), 'gho_secret-token');
  assert.equal(new TokenSeal(secret).open(sealed, owner), 'gho_secret-token', 'the key is derived, not random');
  assert.equal(seal.open(sealed, tokenOwner('usr_2', 'gh')), undefined, 'another member');
  assert.equal(seal.open(sealed, tokenOwner('usr_1', 'gl')), undefined, 'another connection');
  assert.equal(new TokenSeal(randomBytes(32)).open(sealed, owner), undefined, 'another installation');
  const raw = Buffer.from(sealed.slice(3), 'base64url');
  raw[20] = raw[20]! ^ 1;
  assert.equal(seal.open(`v1.${raw.toString('base64url')}`, owner), undefined, 'a flipped bit');
  for (const bad of ['', 'v1.', 'v2.abc', 'v1.AAAA', 'plain']) assert.equal(seal.open(bad, owner), undefined, bad);
});
