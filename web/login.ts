/**
 * The login page's script (bundled for the browser by src/auth/login-page.ts). It runs the OPAQUE client
 * of `@serenity-kit/opaque` — the same library and the same pinned key stretching as the CLI — so only
 * OPAQUE messages reach the server. The capability a login returns is kept in `sessionStorage`
 * (`quarry.cap`): it lives as long as the tab and is sent by the page's own requests only.
 */
import * as opaque from '@serenity-kit/opaque';
import { OPAQUE_KEY_STRETCHING } from '../src/auth/opaque-config.js';

export const CAP_KEY = 'quarry.cap';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

function status(text: string, error = false): void {
  const el = $('status');
  el.textContent = text;
  el.className = error ? 'error' : '';
}

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const err = json['error'] as { code?: string; message?: string } | undefined;
    const retry = res.headers.get('retry-after');
    throw new Error(err?.code === 'rate_limited' && retry ? `Too many attempts; try again in ${retry} s.` : err?.message ?? `HTTP ${res.status}`);
  }
  return json;
}

async function showSession(): Promise<void> {
  const cap = sessionStorage.getItem(CAP_KEY);
  $('login').hidden = cap !== null;
  $('session').hidden = cap === null;
  if (cap === null) return;
  const res = await fetch('/api/auth/whoami', { headers: { authorization: `Bearer ${cap}` } });
  if (!res.ok) {
    sessionStorage.removeItem(CAP_KEY);
    status('Your session has ended; log in again.', true);
    $('login').hidden = false;
    $('session').hidden = true;
    return;
  }
  const me = (await res.json()) as { account: string | null; cap_id: string; rights: string[]; expires_at: string | null };
  $('who').textContent = me.account ?? '(no account)';
  $('cap-id').textContent = me.cap_id;
  $('rights').textContent = me.rights.join(', ');
  $('expires').textContent = me.expires_at === null ? 'no expiry' : new Date(me.expires_at).toLocaleString();
}

async function login(username: string, password: string): Promise<void> {
  await opaque.ready;
  const { clientLoginState, startLoginRequest } = opaque.client.startLogin({ password });
  const started = await post('/api/auth/login/start', { username, ke1: startLoginRequest });
  const finished = opaque.client.finishLogin({
    clientLoginState, loginResponse: String(started['ke2']), password, keyStretching: OPAQUE_KEY_STRETCHING,
  });
  // A wrong password or an unknown name: the client cannot finish. Nothing more is sent; the server
  // counts the abandoned login as a failure.
  if (finished === undefined) throw new Error('The user name or the password is wrong.');
  const done = await post('/api/auth/login/finish', { login_id: started['login_id'], ke3: finished.finishLoginRequest });
  sessionStorage.setItem(CAP_KEY, String(done['cap']));
}

async function register(invite: string, username: string, password: string): Promise<void> {
  await opaque.ready;
  const { clientRegistrationState, registrationRequest } = opaque.client.startRegistration({ password });
  const started = await post('/api/auth/register/start', { username, request: registrationRequest, invite });
  const { registrationRecord } = opaque.client.finishRegistration({
    clientRegistrationState, registrationResponse: String(started['response']), password, keyStretching: OPAQUE_KEY_STRETCHING,
  });
  await post('/api/auth/register/finish', { username, record: registrationRecord, invite });
}

function busy(button: HTMLButtonElement, on: boolean): void {
  button.disabled = on;
}

$('login').addEventListener('submit', (e) => {
  e.preventDefault();
  const button = $<HTMLButtonElement>('login-button');
  const username = $<HTMLInputElement>('username').value.trim().toLowerCase();
  const password = $<HTMLInputElement>('password');
  busy(button, true);
  status('Logging in…');
  login(username, password.value)
    .then(() => { password.value = ''; status(''); return showSession(); })
    .catch((err: Error) => status(err.message, true))
    .finally(() => busy(button, false));
});

$('register').addEventListener('submit', (e) => {
  e.preventDefault();
  const button = $<HTMLButtonElement>('register-button');
  const username = $<HTMLInputElement>('reg-username').value.trim().toLowerCase();
  const password = $<HTMLInputElement>('reg-password');
  busy(button, true);
  status('Registering…');
  register($<HTMLInputElement>('reg-invite').value.trim(), username, password.value)
    .then(() => { password.value = ''; $<HTMLInputElement>('username').value = username; status(`Registered ${username}; you can log in now.`); })
    .catch((err: Error) => status(err.message, true))
    .finally(() => busy(button, false));
});

$('logout').addEventListener('click', () => {
  sessionStorage.removeItem(CAP_KEY);
  status('Logged out.');
  void showSession();
});

void showSession();
