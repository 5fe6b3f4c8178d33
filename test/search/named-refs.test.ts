// The plan-level shortcut of branch-classes.ts: whether a plan whose ref filters each name
// one ref is false on every other ref, decided without a shard. Where it says so, the plan
// specialised on a ref no filter names (match-tree.ts specialize) must be the constant
// false in any shard; the table also pins where it declines (then specialize decides).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { falseOffNamedRefs } from '../../daemon/search/branch-classes.ts';
import { specialize } from '../../daemon/search/match-tree.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';
import type { ShardFacts } from '../../daemon/index/shard-reader.ts';

const plan = (query: string) => planSearch({ query, isRegexEnabled: false, isCaseSensitivityEnabled: true }).plan;

const facts = (languages: string[]): ShardFacts => ({
  repoName: 'r',
  branches: ['main', 'abc1234'],
  archived: false,
  fork: false,
  visibility: 'public',
  languages,
});

test('falseOffNamedRefs: decided from the plan, never false where a shard would not be', () => {
  const table: Array<[string, boolean]> = [
    ['foo rev:abc1234', true],
    ['rev:abc1234', true],
    ['foo rev:abc1234 rev:v1.2', true],
    ['(foo rev:abc1234) or (bar rev:v1.2)', true],
    ['lang:go foo rev:abc1234', true],
    ['foo rev:abc1234 -file:test', true],
    ['foo or rev:abc1234', false],
    ['foo -rev:abc1234', false],
    ['(foo rev:abc1234) or bar', false],
    ['lang:go or rev:abc1234', false],
  ];
  for (const [query, expected] of table) {
    const root = plan(query).root;
    assert.equal(falseOffNamedRefs(root), expected, query);
    for (const languages of [[], ['Go'], ['Go', 'TypeScript']]) {
      const t = specialize(root, facts(languages), '');
      const constFalse = t.op === 'const' && !t.value;
      if (expected) assert.ok(constFalse, `${query}: false here, but not in a shard of ${languages.join(',')}`);
    }
  }
});
