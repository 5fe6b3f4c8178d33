// Command-line errors and help texts. Exit status (docs/command-line.md): 0 success, 1 failure,
// 2 bad usage; errors are one line on stderr.

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const HELP: Record<string, string> = {
  main: `trawl: self-hosted code search

usage: trawl <command> [options]

commands:
  index PATH...     index local git repositories or plain directories
  search QUERY      search the index without a daemon
  sync              one sync pass over the configured connections
  repos             list repositories and their state
  serve             run the daemon (HTTP API, streaming search, sync schedule)
  cluster status    how a cluster stands: nodes, shards, replica health (exit 1 if degraded)
  users             organization members: add, list, suspend, unsuspend, limit, sign-out
  keys              API keys: create, list, revoke (with what each opened)
  sessions          the web UI's browser sessions: list, revoke
  watches           members' watches (saved queries): list, add, events, rm
  license           the enterprise license: install, show, sign
  oauth             applications signed in with OAuth: list, revoke
  audit             the audit log: who did what with which credential
  bench             the benchmark suite: run, compare (bench/README.md)

every command accepts --data-dir DIR (default: $TRAWL_DATA_DIR, else ./.trawl),
--verbose (stack traces on errors) and --help.`,
  index: `usage: trawl index PATH... [--branches GLOB,...] [--tags GLOB,...] [--name NAME] [--full]
                   [--max-file-size BYTES] [--workers N] [--no-symbols] [--history [--max-commits N]]

Indexes each PATH (a git repository: the trees of its default branch and of the selected
branches and tags; otherwise the directory's files) into the data dir. A repository's
name is its origin remote's host/path, else the directory's base name; --name overrides
it (one PATH only). Re-indexing a git repository builds only the files that changed since
the last run when it can, and replaces the index atomically; a repository whose refs did
not move is left as it is.

  --branches GLOBS       branches to index besides the default one ("*" matches anything)
  --tags GLOBS           tags to index
  --full                 rebuild everything instead of only what changed
  --name NAME            repository name
  --max-file-size BYTES  larger files are skipped (default 2097152)
  --workers N            build threads (default: number of cores)
  --no-symbols           skip symbol extraction (the C scanner, universal-ctags):
                         a faster build, but sym: finds nothing in these shards
  --history              also index every commit the indexed refs reach, for searches
                         at any commit (rev:<commit>, at:<time>); later runs add new ones
  --max-commits N        with --history: at most the newest N commits (default 20000)
  --data-dir DIR         data directory`,
  serve: `usage: trawl serve [--config FILE] [--host H] [--port N] [--log-level LEVEL] [--workers N]

Runs the daemon: the HTTP API under /api (README "HTTP API"), Prometheus metrics at
/metrics, and the sync schedule of the configuration's connections. Stops gracefully on
SIGTERM or SIGINT (requests in flight get settings.http.shutdownTimeoutMs to finish).
Logs are JSON lines on stdout; the address is also printed on stderr.

Without a configuration (--config, $TRAWL_CONFIG, ./trawl.json) it runs on the built-in
defaults with anonymous access on, and indexes the current directory first when the data
dir holds no repository.

  --config FILE      configuration file (JSON, trawl.schema.json)
  --host H           address to listen on (default 127.0.0.1)
  --port N           port (default $TRAWL_PORT, else 3000; 0: any free port)
  --log-level LEVEL  fatal, error, warn, info (default), debug, trace or silent
  --workers N        search threads (default: number of cores)
  --data-dir DIR     data directory`,
  users: `usage: trawl users add --email ADDRESS [--name NAME] [--role owner|member]
       trawl users list [--json]
       trawl users suspend EMAIL | unsuspend EMAIL
       trawl users limit EMAIL N|default
       trawl users sign-out EMAIL

Organization members, in the data dir's store. A suspended user's API keys stop working
at once; "limit" sets the user's daily request limit (default: the configuration's
settings.rateLimit.requestsPerDay); "sign-out" signs the user out everywhere: every
scoped token, OAuth grant and browser session of theirs ends now (their API keys stay:
trawl keys revoke ends one).

  --data-dir DIR     data directory`,
  keys: `usage: trawl keys create --user EMAIL [--name NAME]
       trawl keys list --user EMAIL [--json]
       trawl keys revoke ID

API keys ("svk_" + 64 hex). "create" prints the new key once, alone on its line on stdout;
only a keyed hash of it is stored (HMAC-SHA256 with the data dir's server-secret), so a
lost key cannot be shown again: create another and revoke the old one. Send a key as
"Authorization: Bearer KEY" or "X-Service-Api-Key: KEY".

"list" shows under each key what it opened that still works: scoped access tokens, OAuth
grants (applications let in with it) and browser sessions of the web UI (--json: the
answer of GET /api/keys). "revoke" ends the key and, at once, all of those with it, and
says how many it ended.

  --data-dir DIR     data directory`,
  sync: `usage: trawl sync [--config FILE] [--force] [--repo NAME]...

Runs one sync pass over the connections of the configuration file (--config, else
$TRAWL_CONFIG, else ./trawl.json): lists each connection's repositories, clones or fetches
them into the data dir, indexes the ones whose branches or tags moved (only the files that
changed, when it can), and removes repositories no connection lists any more. A connection
that cannot be listed, or a repository that fails, keeps its previous index; the failure is
recorded (trawl repos) and retried with back-off. A repository whose clone URL is not on
its code host (a local path, another host or scheme; see cloneOrigins) is refused: never
fetched nor indexed, its index removed, the reason recorded. Exit status 1 when anything
failed or was refused.

With --repo, only the repositories named (as trawl repos lists them) are fetched and
indexed, without listing the connections, even if they are backing off after failures.

  --config FILE   the configuration file
  --force         retry failed repositories now, ignoring their back-off
  --repo NAME     sync only this repository (repeat for more)
  --data-dir DIR`,
  repos: `usage: trawl repos [--json] [--all]

Lists the repositories of the data dir: id, name, state (new, indexed, failed, deleted),
number of indexed branches and tags, when it was last indexed, and the last error.

  --json    every field of every repository, as JSON
  --all     include deleted repositories (their ids are never reused)
  --data-dir DIR`,
  search: `usage: trawl search QUERY [--json] [--regex] [--case] [--matches N] [--context N] [--whole] [--brute]

Searches the data dir for QUERY, in the query language: terms separated by spaces must
all match (AND), lowercase "or" between them is OR, parentheses group, "-" negates;
filters repo: file: lang: sym: branch: case: content: regex: archived: fork:
visibility:. A term is a literal substring, or an RE2 regular expression with --regex.
Case-insensitive unless --case (or case:yes). Example: 'spin_lock -file:^drivers/'

  --json        print exactly the body POST /api/search would return
  --regex       QUERY is a regular expression
  --case        case-sensitive
  --matches N   match ranges to return (default 100)
  --context N   context lines around each match (default 0)
  --whole       include whole file contents (with --json)
  --brute       bypass the index: check every file (the correctness oracle)
  --data-dir DIR`,
  bench: `usage: trawl bench run --corpus DIR|linux [--queries FILE] [--out FILE] [--quick]
                       [--iterations N] [--http-iterations N] [--index-runs N] [--http-seconds S]
                       [--connections N] [--stream-runs N] [--peer-runs N] [--peer-timeout S] [--no-peers] [--no-symbols]
                       [--auth] [--web] [--reindex] [--cluster] [--cluster-nodes LIST] [--only cluster|viewer|many-repos]
                       [--distinct N] [--cold] [--corpus-repos [N]] [--tiny-repos [N]] [--many-dir DIR]
       trawl bench compare OLD.json NEW.json [--json] [--chart FILE.svg] [--threshold PCT]
                       [--alpha P] [--single-threshold PCT]
       trawl bench history --repo PATH [--queries N] [--pairs N] [--spans N] [--seed N] [--out NAME]

history: indexes a git repository's default branch and its whole history into a temporary
data dir, then measures them beside git grep, git log -S, git log -G and git log --grep on
the same queries; writes NAME.json and NAME.md with --out.

run: indexes the corpus (a directory; "linux" is corpus/linux-6.1 from
scripts/fetch-linux.sh) into a temporary data dir, times each query of the mix in process,
starts a daemon on loopback for HTTP throughput, streaming and memory, and runs ripgrep and
codesearch on the same queries when installed. Writes every raw sample to the result file
(default: ./trawl-bench-<corpus>-<date>.json) and prints a Markdown report.

  --corpus DIR|linux   the tree to benchmark
  --queries FILE       the query mix (default bench/queries/linux.json for linux,
                       else bench/queries/default.json)
  --quick              a smoke test: fewer iterations and shorter runs
  --iterations N       timed runs per query (default 200; --quick 20)
  --http-iterations N  timed requests per query over HTTP, one client (default 50; --quick 5)
  --index-runs N       index builds (default 1)
  --http-seconds S     length of the /api/search load run (default 10; --quick 3)
  --connections N      its connections (default 16; --quick 8)
  --stream-runs N      timed streaming requests (default 9; --quick 2)
  --peer-runs N        runs per query of each peer (default 3; --quick 1)
  --peer-timeout S     a peer run taking longer is stopped (default 300)
  --no-peers           skip ripgrep and codesearch
  --no-symbols         index without symbols (sym: finds nothing)
  --auth               also: an API key's authentication and rate-limit step against
                       anonymous access, on GET /api/repos
  --web                also: the web UI's time to the first result, per query, in
                       headless Chromium (needs chromium and playwright-core)
  --reindex            also: the corpus as a git repository: a full build, ten
                       branches, an unchanged re-run and a one-file incremental run
  --cluster            also: one daemon against clusters of 1, 2 and 4 nodes (private
                       PostgreSQL and Redis): the mix through the nodes, one client and
                       under load, requests per second and CPU per request
  --cluster-nodes LIST the cluster phase's clusters: N nodes, or N/R at replication R (default 1,2,2/1,4,4/4)
  --only cluster       the cluster phase alone, without the core phases
  --only viewer        the code viewer on a 200,000-line file alone (also part of --web)
  --distinct N         held-out identifiers of the corpus, each sent once over HTTP after
                       a warm-up on others: the headline latency (default 200; --quick 30)
  --cold               also time them after dropping the page cache (root only)
  --corpus-repos [N]   also: N repositories cut from the corpus (default 2000): sync,
                       ready, each query kind once beside csearch and rg, load, memory,
                       a one-line change searchable after sync starts
  --tiny-repos [N]     the same on N synthetic tiny repositories (default 20000)
  --many-dir DIR       where those corpora are kept between runs (default corpus/many)
  --only many-repos    that phase alone, without the core phases

compare: per query and per metric, NEW against OLD with a verdict from the raw samples
(Mann-Whitney U and a bootstrap interval of the ratio of medians), the search stats
beside the latency. Exit status 1 when a regression beyond the threshold is found.

  --json               the comparison as JSON, for CI
  --chart FILE.svg     also write a chart of latency per query, old vs new
  --threshold PCT      smallest change reported (default 5)
  --alpha P            significance level of the test (default 0.01)
  --single-threshold PCT
                       for figures measured fewer than 5 times (index build):
                       the change beyond which they count (default 25)`,
};
