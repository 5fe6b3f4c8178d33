// GET /readyz: whether this daemon should be sent search traffic (a load balancer's or an
// orchestrator's readiness probe), apart from GET /api/health (alive and able to answer).
// Not ready (503) until every repository the store knows has its content shards loaded in
// the index, and, when connections are configured and nothing is known yet, until the first
// sync pass has listed them. A repository whose last sync failed with nothing indexed, or
// whose index is damaged, does not hold readiness back: it would never come, and both are
// reported elsewhere (GET /api/repos, /metrics, the logs). A repository whose content is
// searchable while its symbols are being added (manifest.ts symbolsPending) is ready, and
// counted apart (`symbolsPending`).
//
// The counts cover every repository, private ones included, so only an owner's API key
// gets them (owner-key.ts); anyone else (a probe, anonymous or any other credential) gets
// the status and a reason without numbers: all a load balancer acts on, and nothing that
// grows with the private repositories it may not see. Whether the daemon is ready still
// waits for every repository, private ones too: that is the probe's answer.

import type { RepoState } from '../store/store.ts';

export interface ReadinessFacts {
  /** Why the daemon cannot serve at all (shutting down, the store unreadable): Services.unavailable(). */
  unavailable: string | undefined;
  /** Connections are configured and the first sync pass has not ended. */
  firstPassRunning: boolean;
  /** The repositories the store knows (not deleted). */
  repos: ReadonlyArray<{ repoId: number; state: RepoState }>;
  /** Repositories whose content shards the index holds (in a cluster: that live nodes hold, cluster/cluster-view.ts searchable), and those whose index is damaged. */
  loaded: ReadonlySet<number>;
  damaged: ReadonlySet<number>;
  /** Repositories loaded whose symbols are still being added. */
  symbolsPending: ReadonlySet<number>;
}

export interface ReadinessBody {
  status: 'ready' | 'starting' | 'unavailable';
  reason?: string;
  /** For an owner's API key only. */
  repositories?: { total: number; searchable: number; waiting: number; symbolsPending: number };
}

/** The answer; `counts`: the caller is an owner (with the repository counts, and a reason that counts too). */
export function readiness(f: ReadinessFacts, counts: boolean): { status: 200 | 503; body: ReadinessBody } {
  const searchable = f.repos.filter((r) => f.loaded.has(r.repoId)).length;
  const waiting = f.repos.filter((r) => !f.loaded.has(r.repoId) && !f.damaged.has(r.repoId) && r.state !== 'failed').length;
  const symbolsPending = f.repos.filter((r) => f.loaded.has(r.repoId) && f.symbolsPending.has(r.repoId)).length;
  const answer = (status: 200 | 503, body: ReadinessBody) => ({
    status,
    body: counts ? { ...body, repositories: { total: f.repos.length, searchable, waiting, symbolsPending } } : body,
  });
  if (f.unavailable !== undefined) return answer(503, { status: 'unavailable', reason: f.unavailable });
  if (f.firstPassRunning && f.repos.length === 0)
    return answer(503, { status: 'starting', reason: 'the first sync pass has not listed the configured repositories yet' });
  if (waiting > 0)
    return answer(503, {
      status: 'starting',
      reason: counts ? `${waiting} of ${f.repos.length} repositories are not indexed yet` : 'repositories are not indexed yet',
    });
  return answer(200, { status: 'ready' });
}
