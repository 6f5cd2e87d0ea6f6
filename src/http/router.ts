/**
 * The router: a table of `METHOD /pattern` routes parsed once at start-up (STYLE §9, after Go's
 * `net/http` ServeMux). A pattern is literal segments and whole-segment `{name}` parameters. Two routes
 * whose patterns could match the same path under the same method stop start-up, naming both and their
 * groups, because which one wins would otherwise depend on registration order. Lookup tells 404 (no
 * route has this path) from 405 (the path exists under other methods; `Allow` lists them). HEAD is
 * answered by the GET route of the same path.
 */
import type { Method, Route, RouteGroup } from './route.js';
import { BadRequestError, MethodNotAllowedError, NotFoundError } from '../kernel/errors.js';

const METHODS: readonly Method[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

type Segment = { literal: string } | { param: string };

interface Entry {
  route: Route;
  group: string;
  segments: Segment[];
}

export interface Match {
  route: Route;
  params: Record<string, string>;
  /** The path, percent-decoded per segment. */
  path: string;
}

/** Thrown at start-up for a malformed pattern or two overlapping routes. */
export class RouteConflictError extends Error {}

function parsePattern(pattern: string, where: string): Segment[] {
  if (!pattern.startsWith('/')) throw new RouteConflictError(`Route ${where}: pattern must start with "/".`);
  if (pattern === '/') return [];
  const names = new Set<string>();
  return pattern.slice(1).split('/').map((seg, i) => {
    const m = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(seg);
    if (m) {
      if (names.has(m[1]!)) throw new RouteConflictError(`Route ${where}: parameter {${m[1]}} appears twice.`);
      names.add(m[1]!);
      return { param: m[1]! };
    }
    if (seg === '' || /[{}]/.test(seg)) {
      throw new RouteConflictError(`Route ${where}: segment ${i + 1} (${JSON.stringify(seg)}) is neither a literal nor a whole {name}.`);
    }
    return { literal: seg };
  });
}

/** Whether some path matches both segment lists. */
function overlaps(a: Segment[], b: Segment[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((s, i) => {
    const t = b[i]!;
    return 'param' in s || 'param' in t || s.literal === t.literal;
  });
}

export class Router {
  readonly #entries: Entry[] = [];

  constructor(groups: readonly RouteGroup[]) {
    for (const group of groups) for (const route of group.routes) this.#add(route, group.name);
  }

  #add(route: Route, group: string): void {
    const where = `"${route.method} ${route.pattern}" (group ${group})`;
    if (!METHODS.includes(route.method)) throw new RouteConflictError(`Route ${where}: unknown method.`);
    const segments = parsePattern(route.pattern, where);
    for (const other of this.#entries) {
      const sameMethod = other.route.method === route.method
        || (other.route.method === 'GET' && route.method === 'HEAD')
        || (other.route.method === 'HEAD' && route.method === 'GET');
      if (sameMethod && overlaps(other.segments, segments)) {
        const verb = other.route.pattern === route.pattern ? 'duplicates' : 'overlaps';
        throw new RouteConflictError(
          `Route ${where} ${verb} "${other.route.method} ${other.route.pattern}" (group ${other.group}).`,
        );
      }
    }
    this.#entries.push({ route, group, segments });
  }

  /** Every route with its group, in registration order (for the OpenAPI document and diagnostics). */
  get routes(): readonly { route: Route; group: string }[] {
    return this.#entries.map((e) => ({ route: e.route, group: e.group }));
  }

  /** Every method some route serves (HEAD with GET), in the order `Allow` lists them. */
  methods(): Method[] {
    const used = new Set<Method>(this.#entries.map((e) => e.route.method));
    if (used.has('GET')) used.add('HEAD');
    return METHODS.filter((m) => used.has(m));
  }

  /**
   * The route for `method rawPath` (no query string). Throws NotFoundError (no route has this path),
   * MethodNotAllowedError (with the allowed methods) or BadRequestError (malformed percent-encoding).
   */
  match(method: string, rawPath: string): Match {
    const raw = rawPath === '/' ? [] : rawPath.slice(1).split('/');
    let parts: string[];
    try {
      parts = raw.map((s) => decodeURIComponent(s));
    } catch {
      throw new BadRequestError('The request path has a malformed percent-encoding.');
    }
    const path = '/' + parts.join('/');
    for (const entry of this.#entries) {
      // An exact HEAD route would win over GET; they cannot both exist (overlap check).
      if (entry.route.method !== method && !(method === 'HEAD' && entry.route.method === 'GET')) continue;
      const params = matchSegments(entry.segments, parts);
      if (params) return { route: entry.route, params, path };
    }
    const allowed = new Set<Method>();
    for (const entry of this.#entries) {
      if (!matchSegments(entry.segments, parts)) continue;
      allowed.add(entry.route.method);
      if (entry.route.method === 'GET') allowed.add('HEAD');
    }
    if (allowed.size === 0) throw new NotFoundError(`No resource at ${path}.`);
    const allow = METHODS.filter((m) => allowed.has(m));
    throw new MethodNotAllowedError(method, path, allow);
  }
}

/** The path's parameters when `parts` match `segments` (an object made only for a match), else undefined. */
function matchSegments(segments: Segment[], parts: string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const p = parts[i]!;
    if ('param' in s ? p === '' : s.literal !== p) return undefined;
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if ('param' in s) params[s.param] = parts[i]!;
  }
  return params;
}
