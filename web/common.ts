/**
 * What every page script shares: the tab's capability (sessionStorage `quarry.cap`, set by the login
 * page), calls to the REST API with it, who the caller is (`GET /api/auth/whoami`), and the header's
 * "signed in as … / rights / expires" with its sign-out button.
 */
import { h } from '../src/ui/vnode.js';
import type { Problem } from '../src/ui/views.js';
import { render } from './dom.js';

export const CAP_KEY = 'quarry.cap';

export function capability(): string | null {
  return sessionStorage.getItem(CAP_KEY);
}

export function authHeaders(): Record<string, string> {
  const cap = capability();
  return cap === null ? {} : { authorization: `Bearer ${cap}` };
}

export class ApiError extends Error implements Problem {
  constructor(readonly status: number, readonly code: string, message: string) { super(message); }
}

/** Calls the API with the tab's capability; the JSON body, or an ApiError carrying the contract's error. */
export async function api<T = Record<string, unknown>>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method ?? 'GET',
      headers: { ...authHeaders(), ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', 'The server could not be reached.');
  }
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const e = json['error'] as { code?: string; message?: string } | undefined;
    throw new ApiError(res.status, e?.code ?? 'internal', e?.message ?? `The server answered HTTP ${res.status}.`);
  }
  return json as T;
}

export interface Me {
  kind: 'anonymous' | 'capability';
  account?: string | null;
  cap_id?: string | null;
  rights: string[];
  targets?: Record<string, string[]> | null;
  expires_at?: string | null;
}

let me: Promise<Me> | undefined;

/** Who the tab is (anonymous when it holds no capability, or when the capability stopped working). */
export function whoami(): Promise<Me> {
  me ??= api<Me>('/api/auth/whoami').catch((err: ApiError) => {
    if (err.status === 401 && capability() !== null) {
      sessionStorage.removeItem(CAP_KEY); // expired or revoked: the tab is anonymous again
      return api<Me>('/api/auth/whoami');
    }
    return { kind: 'anonymous', rights: [] } as Me;
  });
  return me;
}

/** Whether `me` holds `right`, for `target` when given (a scoped mgmt.* right lists its targets). */
export function can(m: Me, right: string, target?: string): boolean {
  if (!m.rights.includes(right)) return false;
  const scoped = m.targets?.[right];
  return scoped === undefined || target === undefined || scoped.includes(target);
}

/** Fills the header's session area: who, rights, expiry and sign out; or a log-in link. */
export async function showSession(): Promise<Me> {
  const el = document.getElementById('session');
  const m = await whoami();
  if (!el) return m;
  if (m.kind !== 'capability') {
    render(el, h('a', { href: '/login' }, 'Log in'));
    return m;
  }
  const expires = m.expires_at ? new Date(m.expires_at).toLocaleString() : 'never';
  render(el, [
    h('span', { id: 'signed-in' }, 'Signed in as ', h('strong', {}, m.account ?? `capability ${m.cap_id ?? ''}`)),
    h('details', { class: 'rights' }, h('summary', {}, `Rights (${m.rights.length})`), h('span', { id: 'my-rights' }, m.rights.join(', '))),
    h('span', { id: 'my-expiry' }, `Expires: ${expires}`),
    h('button', { type: 'button', class: 'secondary', id: 'sign-out' }, 'Sign out'),
  ]);
  document.getElementById('sign-out')!.addEventListener('click', () => {
    sessionStorage.removeItem(CAP_KEY);
    location.assign('/login');
  });
  return m;
}
