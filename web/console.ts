/**
 * The operator's console (`/console`, `/console/{target}`): the targets' verdicts kept live from
 * `/api/events` (read with fetch: see ./sse.ts), one target's versions, operations and audit, the
 * lifecycle actions the tab's capability may take (a deploy or rollback shows its dry-run plan first and
 * asks for a confirmation naming the target and the version), the running operation's log, and for
 * `auth.admin` the capabilities and invites. Everything goes through the same REST endpoints as any client.
 */
import { h, type VNode } from '../src/ui/vnode.js';
import { api, ApiError, authHeaders, can, showSession, type Me } from './common.js';
import { render } from './dom.js';
import { openEventStream } from './sse.js';

interface Status {
  target: string; verdict: string; sync: string; health: string;
  desired: { version: string } | null; live: { version: string; endpoint?: string } | null; generation: number;
  lock: { op_id?: string; kind?: string } | null; last_op: { op_id?: string; kind?: string; state?: string; updated_at?: string } | null;
  stable_versions: string[]; reasons: string[];
}
interface Op { op_id: string; kind: string; state: string; version: string | null; error: { message: string } | null; log: string }
interface History {
  versions: { version: string; digest: string; state: string; origin: string; updated_at: string }[];
  ops: { op_id: string; kind: string; state: string; version: string | null; from_version: string | null; actor: string | null; reason: string | null; created_at: string; error: { message?: string } | null }[];
  audit: { at: string; actor: string | null; account: string | null; action: string; from_ref: string | null; to_ref: string | null; result: string; reason: string | null }[];
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T | null;
const root = $('console')!;
const only = root.dataset.target || undefined;
const statuses = new Map<string, Status>();
let me: Me;

function problem(err: unknown): VNode {
  const e = err instanceof ApiError ? err : new ApiError(0, 'internal', String(err));
  const advice = e.status === 401 ? ['Your session is missing or over: ', h('a', { href: '/login' }, 'log in'), '.']
    : e.status === 403 ? ['Your capability does not hold the right this needs.'] : ['Try again; the server log says more.'];
  return h('div', { class: 'problem', role: 'alert' }, h('p', {}, h('strong', {}, e.message)), h('p', {}, advice));
}

/** A table that may scroll sideways on a narrow screen: a named region reachable by the keyboard. */
const scroller = (label: string, table: VNode) => h('div', { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: 0 }, table);

const fmtTime = (s: string | null | undefined) => (s ? new Date(s).toLocaleString() : '—');
const v = (x: { version: string } | null) => x?.version ?? '—';

// ───────────────────────────── targets table ─────────────────────────────

function row(s: Status): VNode {
  return h('tr', { 'data-target': s.target },
    h('th', { scope: 'row' }, h('a', { href: `/console/${encodeURIComponent(s.target)}` }, s.target)),
    h('td', { class: `verdict ${s.verdict}`, 'data-col': 'verdict' }, s.verdict),
    h('td', {}, s.sync), h('td', {}, s.health),
    h('td', { 'data-col': 'live' }, v(s.live)), h('td', { 'data-col': 'desired' }, v(s.desired)),
    h('td', {}, String(s.generation)),
    h('td', {}, s.lock ? `${s.lock.kind ?? 'locked'} ${s.lock.op_id ?? ''}` : '—'),
    h('td', {}, s.last_op ? h('span', { class: `state-${s.last_op.state ?? ''}` }, `${s.last_op.kind ?? ''} ${s.last_op.state ?? ''}`) : '—'),
    h('td', { class: 'wrap' }, s.reasons.join(', ') || '—'));
}

function renderTable(): void {
  if (only) renderSummary();
  const body = $('targets-body');
  if (!body) return;
  const rows = [...statuses.values()].sort((a, b) => a.target.localeCompare(b.target));
  render(body, rows.map(row));
  const counts = new Map<string, number>();
  for (const s of rows) counts.set(s.verdict, (counts.get(s.verdict) ?? 0) + 1);
  const summary = $('targets-summary');
  if (summary) summary.textContent = `${rows.length} targets: ${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}`;
}

function setStatuses(list: Status[], replace: boolean): void {
  if (replace) statuses.clear();
  for (const s of list) if (!only || s.target === only) statuses.set(s.target, s);
  renderTable();
}

const refreshing = new Set<string>();
/** Re-reads one target's verdict after an event about it (events say what happened, not the verdict). */
function refreshTarget(target: string): void {
  if (refreshing.has(target) || (only && target !== only)) return;
  refreshing.add(target);
  setTimeout(() => {
    refreshing.delete(target);
    api<{ targets: Status[] }>(`/api/deploy_status?target=${encodeURIComponent(target)}`)
      .then((r) => setStatuses(r.targets, false), () => { /* the next event or snapshot will tell */ });
    if (only) void loadHistory();
  }, 150);
}

function startLive(): void {
  const dot = $('live-dot')!;
  const label = $('live-label')!;
  if (!can(me, 'events.read')) {
    label.textContent = 'Not live: your capability lacks events.read; refreshing every 15 s.';
    setInterval(() => void loadStatus(), 15_000);
    return;
  }
  openEventStream('/api/events', {
    headers: authHeaders,
    onState(state, detail) {
      dot.classList.toggle('on', state === 'open');
      label.textContent = state === 'open' ? 'Live' : state === 'retrying' ? 'Reconnecting…' : `Not live: ${detail ?? ''}`;
    },
    onEvent(e) {
      let data: Record<string, unknown>;
      try { data = JSON.parse(e.data) as Record<string, unknown>; } catch { return; }
      if (e.type === 'snapshot' || e.type === 'reset') {
        if (Array.isArray(data['targets'])) setStatuses(data['targets'] as Status[], true);
        return;
      }
      if (typeof data['target'] === 'string') refreshTarget(data['target']);
      if (e.type.startsWith('crawl.') && $('crawl-body')) void loadCrawl();
      if (e.type === 'build.log' && data['op_id'] === watching && typeof data['line'] === 'string') appendLog(data['line']);
    },
  });
}

async function loadStatus(): Promise<void> {
  const path = only ? `/api/deploy_status?target=${encodeURIComponent(only)}` : '/api/deploy_status';
  const r = await api<{ targets: Status[] }>(path);
  setStatuses(r.targets, true);
}

function tableView(): VNode {
  const cols = ['Target', 'Verdict', 'Sync', 'Health', 'Live', 'Desired', 'Generation', 'Lock', 'Last operation', 'Reasons'];
  return scroller('Targets', h('table', { class: 'grid', id: 'targets' },
    h('caption', { class: 'visually-hidden' }, 'Managed targets and their verdicts'),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', { id: 'targets-body' })));
}

function liveView(): VNode {
  return h('p', { class: 'live' }, h('span', { id: 'live-dot', class: 'live-dot', 'aria-hidden': 'true' }), h('span', { id: 'live-label', role: 'status' }, 'Connecting…'));
}

// ───────────────────────────── one target ─────────────────────────────

function renderSummary(): void {
  const s = only ? statuses.get(only) : undefined;
  const el = $('summary');
  if (!el || !s) return;
  const dl = (k: string, val: VNode) => [h('dt', {}, k), h('dd', {}, val)];
  render(el, h('dl', { class: 'facts' },
    dl('Verdict', h('span', { id: 'verdict', class: `verdict ${s.verdict}` }, s.verdict)),
    dl('Sync / health', `${s.sync} / ${s.health}`),
    dl('Live version', h('span', { id: 'live-version' }, v(s.live))),
    dl('Desired version', h('span', { id: 'desired-version' }, v(s.desired))),
    dl('Generation', String(s.generation)),
    dl('Lock', s.lock ? `${s.lock.kind ?? ''} ${s.lock.op_id ?? ''}` : 'none'),
    dl('Known-good versions', s.stable_versions.join(', ') || '—'),
    dl('Reasons', s.reasons.join(', ') || '—')));
}

let history: History | undefined;

async function loadHistory(): Promise<void> {
  if (!only) return;
  try {
    history = await api<History>(`/api/history?target=${encodeURIComponent(only)}`);
  } catch (err) {
    render($('history')!, problem(err));
    return;
  }
  const table = (caption: string, cols: string[], rows: VNode[][]) => scroller(caption, h('table', { class: 'grid' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.length ? rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c)))) : h('tr', {}, h('td', { colspan: cols.length }, 'None yet.')))));
  render($('history')!, [
    h('h2', {}, 'Versions'),
    table('Versions of this target, newest first', ['Version', 'State', 'Origin', 'Digest', 'Changed'],
      history.versions.map((x) => [h('code', {}, x.version), x.state, x.origin, h('code', {}, x.digest.slice(0, 19) + '…'), fmtTime(x.updated_at)])),
    h('h2', {}, 'Operations'),
    table('Last operations, newest first', ['Operation', 'Kind', 'State', 'Version', 'From', 'Reason', 'Started', 'Error'],
      history.ops.map((o) => [h('code', {}, o.op_id), o.kind, h('span', { class: `state-${o.state}` }, o.state), o.version ?? '—', o.from_version ?? '—', o.reason ?? '—', fmtTime(o.created_at), o.error?.message ?? '—'])),
    h('h2', {}, 'Audit'),
    table('Audit entries about this target, newest first', ['When', 'Who', 'Action', 'From', 'To', 'Result'],
      history.audit.map((a) => [fmtTime(a.at), a.account ?? a.actor ?? 'local', a.action, a.from_ref ?? '—', a.to_ref ?? '—', a.result])),
  ]);
  fillVersionChoices();
}

function fillVersionChoices(): void {
  const fill = (id: string, states: string[]) => {
    const sel = $<HTMLSelectElement>(id);
    if (!sel || !history) return;
    const keep = sel.value;
    const opts = history.versions.filter((x) => states.includes(x.state));
    render(sel, opts.length ? opts.map((x) => h('option', { value: x.version }, `${x.version} (${x.state})`)) : h('option', { value: '' }, 'none available'));
    if (opts.some((x) => x.version === keep)) sel.value = keep;
  };
  fill('stage-version', ['built']);
  fill('deploy-version', ['staged', 'superseded', 'live']);
}

let watching: string | undefined;

function appendLog(line: string): void {
  const log = $('op-log');
  if (log) log.textContent += line.endsWith('\n') ? line : `${line}\n`;
}

/** Follows an operation until it ends: its state and log from GET /api/ops/{id}. */
async function watchOp(opId: string, what: string): Promise<void> {
  watching = opId;
  const panel = $('op')!;
  render(panel, [
    h('h2', {}, `Operation ${opId}`),
    h('p', { id: 'op-state', role: 'status' }, `${what}: queued`),
    h('pre', { id: 'op-log', class: 'oplog', tabindex: 0, 'aria-label': 'Operation log' }),
  ]);
  for (;;) {
    let op: Op;
    try {
      op = await api<Op>(`/api/ops/${encodeURIComponent(opId)}`);
    } catch (err) {
      render(panel, problem(err));
      return;
    }
    $('op-log')!.textContent = op.log;
    const state = $('op-state')!;
    state.textContent = `${what}: ${op.state}${op.error ? ` — ${op.error.message}` : ''}`;
    state.className = `state-${op.state}`;
    if (op.state === 'succeeded' || op.state === 'failed' || op.state === 'cancelled') break;
    await new Promise((r) => setTimeout(r, 700));
  }
  watching = undefined;
  void loadHistory();
  void loadStatus().catch(() => undefined);
}

function message(text: string, error = false): void {
  const el = $('action-msg')!;
  el.textContent = text;
  el.className = error ? 'msg error' : 'msg';
}

/** Asks before an operation that changes what is live; resolves true when confirmed. */
function confirmDialog(title: string, body: VNode[], confirmLabel: string): Promise<boolean> {
  const dialog = $<HTMLDialogElement>('confirm')!;
  render(dialog, h('form', { method: 'dialog' },
    h('h2', { id: 'confirm-title' }, title), ...body,
    h('div', { class: 'buttons' },
      h('button', { value: 'cancel', class: 'secondary', id: 'confirm-cancel' }, 'Cancel'),
      h('button', { value: 'ok', class: 'danger', id: 'confirm-ok' }, confirmLabel))));
  dialog.setAttribute('aria-labelledby', 'confirm-title');
  dialog.returnValue = '';
  dialog.showModal();
  $('confirm-cancel')!.focus();
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }));
}

async function submit(path: string, body: Record<string, unknown>, what: string): Promise<void> {
  try {
    const r = await api<{ op_id: string }>(path, { method: 'POST', body });
    message(`${what} started.`);
    await watchOp(r.op_id, what);
  } catch (err) {
    message(err instanceof ApiError ? `${what} refused: ${err.message}` : String(err), true);
  }
}

/** Deploy and rollback: the dry-run plan first, then a confirmation naming the target and the version. */
async function planned(kind: 'deploy' | 'rollback', body: Record<string, unknown>): Promise<void> {
  const target = only!;
  let plan: { plan: Record<string, unknown> };
  try {
    plan = await api<{ plan: Record<string, unknown> }>(`/api/${kind}`, { method: 'POST', body: { ...body, target, dry_run: true } });
  } catch (err) {
    message(err instanceof ApiError ? `The ${kind} plan was refused: ${err.message}` : String(err), true);
    return;
  }
  const to = String(plan.plan['to'] ?? '');
  render($('plan')!, [h('h3', {}, `Dry run: ${kind} ${target}`), h('pre', { class: 'plan', id: 'plan-json' }, JSON.stringify(plan.plan, null, 2))]);
  const ok = await confirmDialog(`${kind === 'deploy' ? 'Deploy' : 'Roll back'} ${target} to version ${to}?`, [
    h('p', {}, `Target `, h('strong', {}, target), ` will serve version `, h('strong', {}, to), ` (now ${String(plan.plan['from'] ?? 'nothing')}).`),
    h('p', {}, 'The plan is shown on the page behind this dialog.'),
  ], kind === 'deploy' ? `Deploy ${to}` : `Roll back to ${to}`);
  if (!ok) { message('Cancelled; nothing changed.'); return; }
  const generation = plan.plan['generation'];
  await submit(`/api/${kind}`, kind === 'deploy'
    ? { target, version: to, ...(typeof generation === 'number' ? { expected_generation: generation } : {}) }
    : { target, to }, kind === 'deploy' ? 'Deploy' : 'Rollback');
}

function actionsView(target: string): VNode {
  const may = (r: string) => can(me, r, target);
  const lacking = ['mgmt.build', 'mgmt.stage', 'mgmt.deploy', 'mgmt.rollback', 'mgmt.reconcile', 'mgmt.restart'].filter((r) => !may(r));
  return h('section', { class: 'panel', 'aria-labelledby': 'actions-h' },
    h('h2', { id: 'actions-h' }, 'Actions'),
    h('div', { class: 'actions' },
      may('mgmt.build') ? h('button', { type: 'button', id: 'do-build' }, 'Build') : null,
      may('mgmt.stage') ? h('div', { class: 'action' }, h('label', {}, 'Built version', h('select', { id: 'stage-version' })), h('button', { type: 'button', id: 'do-stage' }, 'Stage')) : null,
      may('mgmt.deploy') ? h('div', { class: 'action' }, h('label', {}, 'Version to deploy', h('select', { id: 'deploy-version' })), h('button', { type: 'button', id: 'do-deploy' }, 'Plan deploy…')) : null,
      may('mgmt.rollback') ? h('button', { type: 'button', id: 'do-rollback' }, 'Plan rollback…') : null,
      may('mgmt.reconcile') ? h('button', { type: 'button', id: 'do-reconcile', class: 'secondary' }, 'Reconcile') : null,
      may('mgmt.restart') ? h('button', { type: 'button', id: 'do-restart', class: 'secondary' }, 'Restart') : null),
    lacking.length ? h('p', { class: 'doc-meta' }, `Not offered: your capability lacks ${lacking.join(', ')} for this target.`) : null,
    h('p', { id: 'action-msg', class: 'msg', role: 'status' }),
    h('div', { id: 'plan' }),
    h('div', { id: 'op' }));
}

function wireActions(target: string): void {
  const on = (id: string, fn: () => void) => $(id)?.addEventListener('click', fn);
  on('do-build', () => void submit('/api/build', { target }, 'Build'));
  on('do-stage', () => {
    const version = $<HTMLSelectElement>('stage-version')!.value;
    if (!version) { message('Build a version first: there is no built version to stage.', true); return; }
    void submit('/api/upload', { target, version }, 'Stage');
  });
  on('do-deploy', () => {
    const version = $<HTMLSelectElement>('deploy-version')!.value;
    void planned('deploy', version ? { version } : {});
  });
  on('do-rollback', () => void planned('rollback', { to: 'previous' }));
  on('do-reconcile', () => void submit('/api/reconcile', { target }, 'Reconcile'));
  on('do-restart', () => {
    void confirmDialog(`Restart ${target}?`, [h('p', {}, 'The live version is started anew, checked for health, then the old process stops.')], 'Restart')
      .then((ok) => { if (ok) void submit('/api/restart', { target }, 'Restart'); });
  });
}

// ───────────────────────────── capabilities (auth.admin) ─────────────────────────────

interface Cap { cap_id: string; parent_id: string | null; account: string | null; rights: string[]; expires_at: string | null; revoked: boolean }
const ALL_RIGHTS = ['search', 'trusted.flag', 'events.read', 'mgmt.read', 'mgmt.build', 'mgmt.stage', 'mgmt.deploy', 'mgmt.rollback', 'mgmt.reconcile', 'mgmt.restart', 'auth.admin'];

async function loadCaps(): Promise<void> {
  const el = $('caps-list')!;
  let caps: Cap[];
  try { caps = (await api<{ caps: Cap[] }>('/api/caps')).caps; } catch (err) { render(el, problem(err)); return; }
  render(el, scroller('Capabilities', h('table', { class: 'grid' },
    h('caption', {}, 'Capabilities minted or derived, newest first'),
    h('thead', {}, h('tr', {}, ['Id', 'Account', 'Rights', 'Expires', 'State', ''].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, caps.map((c) => h('tr', {},
      h('td', {}, h('code', {}, c.cap_id)), h('td', {}, c.account ?? '—'), h('td', { class: 'wrap' }, c.rights.join(', ')),
      h('td', {}, fmtTime(c.expires_at)), h('td', {}, c.revoked ? 'revoked' : 'active'),
      h('td', {}, c.revoked ? '' : h('button', { type: 'button', class: 'secondary', 'data-revoke': c.cap_id, 'aria-label': `Revoke ${c.cap_id}` }, 'Revoke'))))))));
}

function capsView(): VNode {
  return h('section', { class: 'panel', 'aria-labelledby': 'caps-h' },
    h('h2', { id: 'caps-h' }, 'Capabilities and invites'),
    h('form', { id: 'invite-form', class: 'form-grid' },
      h('fieldset', {}, h('legend', {}, 'Rights of the invited account'),
        ALL_RIGHTS.map((r) => h('label', {}, h('input', { type: 'checkbox', name: 'right', value: r, checked: r === 'search' }), r))),
      h('button', { type: 'submit' }, 'Mint invite')),
    h('p', { id: 'invite-msg', class: 'msg', role: 'status' }),
    h('div', { id: 'caps-list' }));
}

function wireCaps(): void {
  $('invite-form')!.addEventListener('submit', (e) => {
    e.preventDefault();
    const rights = [...document.querySelectorAll<HTMLInputElement>('#invite-form input[name="right"]:checked')].map((i) => i.value);
    const msg = $('invite-msg')!;
    api<{ invite: string; expires_at: string }>('/api/auth/invites', { method: 'POST', body: { rights } }).then((r) => {
      msg.className = 'msg ok';
      render(msg, ['Invite (shown once; give it to the new user): ', h('code', { id: 'invite-code' }, r.invite), ` — valid until ${fmtTime(r.expires_at)}.`]);
    }, (err: ApiError) => { msg.className = 'msg error'; msg.textContent = err.message; });
  });
  $('caps-list')!.addEventListener('click', (e) => {
    const id = (e.target as HTMLElement).closest('button')?.dataset.revoke;
    if (!id) return;
    void confirmDialog(`Revoke ${id}?`, [h('p', {}, 'It and every capability derived from it stop working at once.')], 'Revoke').then((ok) => {
      if (!ok) return;
      api<{ revoked: number }>('/api/caps/revoke', { method: 'POST', body: { cap_id: id } })
        .then(() => loadCaps(), (err: ApiError) => { $('invite-msg')!.textContent = err.message; });
    });
  });
}

// ───────────────────────────── crawl and maturity ─────────────────────────────

interface HostFigures { host: string; docs: number; fetched: number; lastSuccessAt: string | null; errorRate: number; duplicateRate: number }
interface CrawlStatus {
  state: string; pages: number; indexed: number; errors: number; duplicates: number; robotsDisallowed: number;
  inFlight: number; queued: number; hosts: number; pagesPerSecond: number; last_error?: string; host_figures: HostFigures[];
}
interface DomainGrade {
  domain: string; grade: string; documents: { total: number }; freshness_s: number | null; fetch_error_rate: number | null; duplicate_rate: number | null;
}

const percent = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);

/** The crawler's state, counters, last error and busiest hosts (`GET /api/crawl`, right crawl.admin). */
async function loadCrawl(): Promise<void> {
  const at = $('crawl-body');
  if (!at) return;
  try {
    const c = await api<CrawlStatus>('/api/crawl');
    render(at, [
      h('p', {}, `State: ${c.state}. ${c.pages} pages fetched, ${c.indexed} indexed, ${c.errors} errors, ${c.duplicates} duplicates, `
        + `${c.robotsDisallowed} refused by robots.txt; ${c.inFlight} in flight, ${c.queued} queued over ${c.hosts} hosts.`),
      c.last_error ? h('p', { class: 'problem' }, `Last error: ${c.last_error}`) : null,
      c.host_figures.length === 0 ? h('p', {}, 'No host fetched yet.') : scroller('Crawled hosts', h('table', { class: 'grid' },
        h('caption', {}, 'Hosts, most fetched first'),
        h('thead', {}, h('tr', {}, ...['host', 'fetched', 'documents', 'errors', 'duplicates', 'last success'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, ...c.host_figures.map((f) => h('tr', {},
          h('td', {}, f.host), h('td', {}, String(f.fetched)), h('td', {}, String(f.docs)), h('td', {}, percent(f.errorRate)),
          h('td', {}, percent(f.duplicateRate)), h('td', {}, f.lastSuccessAt ?? '—')))))),
    ]);
  } catch (err) {
    render(at, problem(err));
  }
}

/** Every known domain's measured grade (`GET /api/maturity`; docs/maturity.md has the rubric). */
async function loadMaturity(): Promise<void> {
  const at = $('maturity-body');
  if (!at) return;
  try {
    const r = await api<{ total: number; domains: DomainGrade[] }>('/api/maturity');
    const shown = r.domains.slice(0, 20);
    render(at, r.domains.length === 0 ? h('p', {}, 'No domain is indexed yet.') : [
      scroller('Maturity grades', h('table', { class: 'grid' },
        h('caption', {}, `Domains, most documents first (${shown.length} of ${r.total})`),
        h('thead', {}, h('tr', {}, ...['domain', 'grade', 'documents', 'freshness', 'fetch errors', 'duplicates'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, ...shown.map((d) => h('tr', {},
          h('td', {}, d.domain), h('td', {}, d.grade), h('td', {}, String(d.documents.total)),
          h('td', {}, d.freshness_s === null ? '—' : `${d.freshness_s} s`), h('td', {}, percent(d.fetch_error_rate)), h('td', {}, percent(d.duplicate_rate))))))),
    ]);
  } catch (err) {
    render(at, problem(err));
  }
}

// ───────────────────────────── start ─────────────────────────────

async function start(): Promise<void> {
  me = await showSession();
  if (!can(me, 'mgmt.read')) {
    render(root, [
      h('p', {}, 'The console needs a capability holding ', h('code', {}, 'mgmt.read'), '.'),
      me.kind === 'capability' ? h('p', {}, 'Yours does not; ask an administrator for one.') : h('p', {}, h('a', { href: '/login' }, 'Log in'), ' first.'),
      can(me, 'auth.admin') ? capsView() : null,
    ]);
    if (can(me, 'auth.admin')) { wireCaps(); void loadCaps(); }
    return;
  }
  if (only) {
    render(root, [
      h('p', {}, h('a', { href: '/console' }, '← All targets')),
      liveView(),
      h('section', { id: 'summary', class: 'panel', 'aria-label': 'Status' }),
      actionsView(only),
      h('section', { id: 'history', 'aria-label': 'History' }),
      h('dialog', { id: 'confirm' }),
    ]);
    wireActions(only);
    void loadHistory();
  } else {
    render(root, [
      liveView(),
      h('p', { id: 'targets-summary', class: 'doc-meta' }, 'Loading the targets…'),
      tableView(),
      can(me, 'crawl.admin') ? h('section', { class: 'panel', id: 'crawl-panel', 'aria-labelledby': 'crawl-h' },
        h('h2', { id: 'crawl-h' }, 'Crawl'), h('div', { id: 'crawl-body', 'aria-live': 'polite' }, 'Loading the crawl status…')) : null,
      h('section', { class: 'panel', id: 'maturity-panel', 'aria-labelledby': 'maturity-h' },
        h('h2', { id: 'maturity-h' }, 'Maturity grades'), h('div', { id: 'maturity-body' }, 'Loading the grades…')),
      can(me, 'auth.admin') ? capsView() : null,
      h('dialog', { id: 'confirm' }),
    ]);
    if (can(me, 'auth.admin')) { wireCaps(); void loadCaps(); }
    if (can(me, 'crawl.admin')) void loadCrawl();
    void loadMaturity();
  }
  try {
    await loadStatus();
  } catch (err) {
    const at = $(only ? 'summary' : 'targets-summary');
    if (at) render(at, problem(err));
  }
  startLive();
}

void start();
