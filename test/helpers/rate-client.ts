// A client process of rate-limit-processes.test.ts: sends `count` requests, `inFlight` at a
// time, alternating between the daemons' URLs and between two rate-limited endpoints, and
// prints one JSON array of what came back (status and rate-limit headers of each response).
//
//   node --import tsx test/helpers/rate-client.ts '{"urls":[...],"headers":{...},"count":50,"inFlight":5}'

interface Plan {
  urls: string[];
  headers: Record<string, string>;
  count: number;
  inFlight: number;
}

export interface RateClientResult {
  status: number;
  errorCode?: string;
  limit: string | null;
  remaining: string | null;
  reset: string | null;
  retryAfter: string | null;
}

const plan = JSON.parse(process.argv[2]!) as Plan;
const results: RateClientResult[] = [];
let next = 0;

async function one(i: number): Promise<void> {
  const base = plan.urls[i % plan.urls.length]!;
  const res =
    i % 3 === 0
      ? await fetch(`${base}/api/search`, {
          method: 'POST',
          headers: { ...plan.headers, 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'limit', matches: 5 }),
        })
      : await fetch(`${base}/api/repos`, { headers: plan.headers });
  const body = (await res.json()) as { errorCode?: string };
  const h = (name: string) => res.headers.get(name);
  results.push({
    status: res.status,
    ...(body.errorCode ? { errorCode: body.errorCode } : {}),
    limit: h('x-ratelimit-limit'),
    remaining: h('x-ratelimit-remaining'),
    reset: h('x-ratelimit-reset'),
    retryAfter: h('retry-after'),
  });
}

async function worker(): Promise<void> {
  while (next < plan.count) await one(next++);
}

await Promise.all(Array.from({ length: plan.inFlight }, worker));
process.stdout.write(JSON.stringify(results));
