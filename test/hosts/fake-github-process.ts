// The fake GitHub in a process of its own, for the permission-sync measurement
// (bench/suite/permissions-bench.ts, which starts this file by path), so that serving does
// not share the measured process's event loop: `repos` private
// repositories acme/r0.. of organisation acme, `members` accounts p0.. (id 10000 + n, token
// "token-pN"), each repository readable by a seeded random tenth of them, pages of 100.
// Prints "listening URL TOKEN" (the connection's token) when it answers.

import { TOKEN, startFake, type FakeAccount, type FakeRepo } from './fake-hosts.ts';

const [repoCount, memberCount] = process.argv.slice(2).map(Number) as [number, number];
let seed = 20261128;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const accounts: FakeAccount[] = Array.from({ length: memberCount }, (_, m) => ({
  id: 10_000 + m,
  login: `p${m}`,
  email: `p${m}@example.com`,
  token: `token-p${m}`,
}));
const repos: FakeRepo[] = Array.from({ length: repoCount }, (_, r) => ({
  owner: 'acme',
  name: `r${r}`,
  group: 'g',
  private: true,
  readers: accounts.filter(() => random() < 0.1).map((a) => a.login),
}));
const fake = await startFake('github', { repos, accounts, pageSize: 100 });
process.stdout.write(`listening ${fake.url} ${TOKEN}\n`);
