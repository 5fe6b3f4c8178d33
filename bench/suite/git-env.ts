// The git repositories the bench makes out of a corpus (phase-reindex.ts, phase-commands.ts):
// made by the git CLI under a fixed environment, so that the same corpus gives the same
// commits run after run and no user's or system's configuration (hooks, signing, identity)
// gets in.

export const GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'trawl bench',
  GIT_AUTHOR_EMAIL: 'bench@trawl.invalid',
  GIT_COMMITTER_NAME: 'trawl bench',
  GIT_COMMITTER_EMAIL: 'bench@trawl.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** Files worth changing: text that every corpus has some of. */
export const TEXT_FILE = /\.(c|h|cc|cpp|hpp|go|rs|java|kt|py|rb|ts|tsx|js|jsx|sh|md|rst|txt|json|ya?ml|toml)$/i;
