// Which node answers each unit of a search (fan-out.ts): few nodes asked, because every
// node asked costs a request on both sides whatever it searches (the cluster phase of the
// benchmark, docs/deployment.md "Sizing"), where searching one more shard of a node already
// asked costs only that shard. A greedy set cover: this node takes every unit it holds (no
// request at all), then, while units are left, the node that can take the most of them
// takes them all; between nodes that can take as many, the one the units prefer (the
// lowest sum of its ranks in their holder lists, which are in rendezvous order): so with
// one unit per node every unit goes to its first holder, and every coordinator makes the
// same choice for the same units, which keeps a shard's pages warm where it is asked.

/**
 * `holders[i]`: the nodes that may answer unit i, best first (none: the caller deals with
 * it; such units are left out). Returns the units each chosen node answers, ascending.
 */
export function cover(holders: ReadonlyArray<readonly string[]>, self: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const left: number[] = [];
  for (let i = 0; i < holders.length; i++) {
    if (holders[i]!.length === 0) continue;
    if (holders[i]!.includes(self)) take(out, self, i);
    else left.push(i);
  }
  let rest = left;
  while (rest.length > 0) {
    const count = new Map<string, number>();
    const rank = new Map<string, number>();
    for (const i of rest) {
      holders[i]!.forEach((n, r) => {
        count.set(n, (count.get(n) ?? 0) + 1);
        rank.set(n, (rank.get(n) ?? 0) + r);
      });
    }
    let best = '';
    for (const [n, c] of count) {
      const b = count.get(best) ?? 0;
      if (c > b || (c === b && (rank.get(n)! < rank.get(best)! || (rank.get(n) === rank.get(best) && n < best)))) best = n;
    }
    const next: number[] = [];
    for (const i of rest) {
      if (holders[i]!.includes(best)) take(out, best, i);
      else next.push(i);
    }
    rest = next;
  }
  return out;
}

function take(out: Map<string, number[]>, node: string, i: number): void {
  const list = out.get(node);
  if (list) list.push(i);
  else out.set(node, [i]);
}
