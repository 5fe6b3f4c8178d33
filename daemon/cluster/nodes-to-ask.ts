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

/**
 * Spreads the units `first` says are searched whole from the start (fan-out.ts: the first
 * ones of a search, which the merge needs before any cut) over the other nodes `out`
 * already asks (this node keeps what it holds, as cover() gives it: no request for those):
 * while one node would search more of them than another node that also holds one of them,
 * that one moves. A node searches its part's units one after the other, so the first units
 * of a search on one node (the cover's choice when it holds them all: a common word over
 * four nodes had its first three shards on one node, searched in a row) were the critical
 * path; spread, they are searched beside each other, and no more nodes are asked. `out`
 * changes in place; its lists stay ascending.
 */
export function spreadFirst(out: Map<string, number[]>, holders: ReadonlyArray<readonly string[]>, self: string, first: (i: number) => boolean): void {
  const firstOf = (node: string): number => out.get(node)!.filter(first).length;
  const asked = (n: string): boolean => n !== self && out.has(n);
  for (;;) {
    let moved = false;
    const nodes = [...out.keys()].filter(asked).sort((a, b) => firstOf(b) - firstOf(a));
    for (const from of nodes) {
      const have = firstOf(from);
      if (have < 2) break;
      // The last of its first units first: the node keeps the one the merge needs soonest.
      const units = out.get(from)!.filter(first).reverse();
      for (const i of units) {
        const to = holders[i]!.find((n) => n !== from && asked(n) && firstOf(n) + 1 < have);
        if (to === undefined) continue;
        out.set(
          from,
          out.get(from)!.filter((k) => k !== i),
        );
        out.set(
          to,
          [...out.get(to)!, i].sort((x, y) => x - y),
        );
        moved = true;
        break;
      }
      if (moved) break;
    }
    if (!moved) return;
  }
}
