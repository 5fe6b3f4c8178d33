// The routes of the HTTP server by path (server.ts): compiled once at start, looked up per
// request. A route's path is `/api/...` with `{name}` segments for its parameters.

import type { Route } from './route.ts';
import type { Validate } from './validate.ts';

export interface CompiledRoute {
  route: Route;
  segments: string[];
  body?: Validate<unknown>;
  query?: Validate<unknown>;
}

/**
 * The routes of one path, by method, with what every request to it needs computed once
 * (the metrics label, whether it is a CORS route, the Allow list) rather than per request.
 */
export interface PathRoutes {
  byMethod: Map<string, CompiledRoute>;
  label: string;
  cors: boolean;
  /** The methods, for a CORS preflight; and for a 405's Allow (HEAD added with GET). */
  methods: string;
  allow: string;
}

export interface Found {
  routes: PathRoutes;
  params: Record<string, string>;
}

export interface RouteTable {
  fixed: Map<string, PathRoutes>;
  templated: Array<{ segments: string[]; routes: PathRoutes }>;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * The routes by path: a path without parameters is found with one map lookup; those with
 * `{name}` segments (few) are tried in order. The first route of a path names it in the
 * metrics; a path's routes are merged by method, the first of a method winning.
 */
export function routeTable(compiled: CompiledRoute[]): RouteTable {
  const byPath = new Map<string, { segments: string[]; list: CompiledRoute[] }>();
  for (const c of compiled) {
    // Paths that differ only in their parameters' names match the same URLs: one entry.
    const shape = c.segments.map((s) => (isParam(s) ? '{}' : s)).join('/');
    const entry = byPath.get(shape) ?? { segments: c.segments, list: [] };
    entry.list.push(c);
    byPath.set(shape, entry);
  }
  const fixed = new Map<string, PathRoutes>();
  const templated: Array<{ segments: string[]; routes: PathRoutes }> = [];
  for (const { segments, list } of byPath.values()) {
    const byMethod = new Map<string, CompiledRoute>();
    for (const c of list) if (!byMethod.has(c.route.method)) byMethod.set(c.route.method, c);
    const methods = [...byMethod.keys()];
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    const routes: PathRoutes = {
      byMethod,
      label: list[0]!.route.path,
      cors: list.some((c) => c.route.cors),
      methods: methods.join(', '),
      allow: allow.join(', '),
    };
    if (segments.some(isParam)) templated.push({ segments, routes });
    else fixed.set(segments.join('/'), routes);
  }
  // A fixed path that a templated one also matches would have two sets of methods: refuse it.
  for (const path of fixed.keys()) {
    const parts = path.split('/');
    const other = templated.find((t) => t.segments.length === parts.length && t.segments.every((s, i) => isParam(s) || s === parts[i]));
    if (other) throw new Error(`route ${path} overlaps ${other.routes.label}`);
  }
  return { fixed, templated };
}

function isParam(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

export function match(table: RouteTable, url: string): Found | undefined {
  const routes = table.fixed.get(url);
  if (routes) return { routes, params: NO_PARAMS };
  const parts = url.split('/');
  for (const t of table.templated) {
    if (t.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const s = t.segments[i]!;
      if (isParam(s)) {
        if (parts[i] === '') ok = false;
        else params[s.slice(1, -1)] = safeDecode(parts[i]!);
      } else if (s !== parts[i]) ok = false;
    }
    if (ok) return { routes: t.routes, params };
  }
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
