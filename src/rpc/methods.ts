/**
 * The methods of `quarry.v1`, each a translation: the request message into the application service's
 * input as the caller sent it, the service's resource into the response message field by field. The
 * services hold every rule (rights, validation, idempotency, audit); nothing here decides anything but
 * the type mapping of docs/rpc.md — cids and counts as 64-bit integers, scores as int64, the string
 * enums of the REST resources as protobuf enums, ISO times as `google.protobuf.Timestamp`.
 */
import { create, type DescEnum, type DescMessage, type DescMethod, type JsonObject, type MessageShape } from '@bufbuild/protobuf';
import { MethodOptions_IdempotencyLevel, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import type { IncomingHttpHeaders } from 'node:http';
import { presentedCapabilities, type AuthService } from '../auth/index.js';
import type { ControlService, OpAnswer, PlanAnswer, Submitted, TargetStatus } from '../control/index.js';
import { NotFoundError, QuarryError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import type { SearchService } from '../search/service.js';
import { decodeSearchRequest, encodeSearchResponse } from './search-wire.js';
import { AuthService as AuthServiceDesc, IssuedCapabilitySchema, TargetListSchema } from './gen/quarry/v1/auth_pb.js';
import {
  ControlService as ControlServiceDesc, DeployStatusSchema, HealthStatusSchema, InventorySchema, OperationAcceptedSchema,
  OperationKindSchema, OperationSchema, OperationStateSchema, PromotionSchema, SyncStatusSchema, VerdictSchema,
} from './gen/quarry/v1/control_pb.js';
import {
  DocumentSchema, ResultSchema, Scope, ScopeSchema, SearchResponseSchema, SearchService as SearchServiceDesc, SuggestResponseSchema, type Result, type SearchResponse,
} from './gen/quarry/v1/search_pb.js';
import type { FlagResource, TrustedService } from '../trusted/service.js';
import {
  ListTrustedResponseSchema, TrustedEntrySchema, TrustedService as TrustedServiceDesc, TrustedState, UnflagResponseSchema,
} from './gen/quarry/v1/trusted_pb.js';

/** What a method knows of its call besides the request message. */
export interface CallContext {
  readonly principal: Principal;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress: string;
  /** When the answer stops being useful (epoch ms): the sooner of the server's request timeout and `Connect-Timeout-Ms`. */
  readonly deadline?: number;
}

/** One method: its descriptor and its implementation (request message → response message). */
export interface Procedure {
  readonly method: DescMethod;
  /** Only NO_SIDE_EFFECTS methods answer the Connect GET form. */
  readonly sideEffectFree: boolean;
  call(ctx: CallContext, request: MessageShape<DescMessage>): Promise<MessageShape<DescMessage>>;
  /** The response in the binary format by a dedicated writer, for a method on the hot path; else the generic encoder. */
  readonly encodeBinary?: (response: MessageShape<DescMessage>) => Buffer;
  /** The request from the binary format by a dedicated reader of its usual form (undefined: the generic decoder decides). */
  readonly decodeBinary?: (bytes: Uint8Array) => MessageShape<DescMessage> | undefined;
}

export interface Services {
  search: SearchService;
  control: ControlService;
  auth: AuthService;
  trusted: TrustedService;
}

type Impl<M extends DescMethod> = (ctx: CallContext, req: MessageShape<M['input']>) => Promise<MessageShape<M['output']>> | MessageShape<M['output']>;

/** Every method of the contract, by procedure name: `quarry.v1.<Service>/<Method>`, as on the Connect path and in `Call.procedure`. */
export function procedures(s: Services): Map<string, Procedure> {
  const table = new Map<string, Procedure>();
  const add = <M extends DescMethod>(
    method: M, impl: Impl<M>,
    wire?: { encode: (response: MessageShape<M['output']>) => Buffer; decode: (bytes: Uint8Array) => MessageShape<M['input']> | undefined },
  ) => {
    const name = `${method.parent.typeName}/${method.name}`;
    table.set(name, {
      method, sideEffectFree: method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS,
      call: async (ctx, req) => impl(ctx, req as MessageShape<M['input']>) as MessageShape<DescMessage>,
      ...(wire ? { encodeBinary: wire.encode as (response: MessageShape<DescMessage>) => Buffer, decodeBinary: wire.decode } : {}),
    });
  };

  const search = SearchServiceDesc.method;
  add(search.search, async ({ principal, deadline }, req) => {
    const r = await s.search.search(principal, { q: req.q, scope: scopeIn(req.scope), page: req.page }, deadline !== undefined ? { deadline } : {});
    // Built as the message objects `create` would make (every implicit field set, optional ones only when
    // present), without its per-field walk of the descriptor: this answer is on the hot path.
    const response: SearchResponse = {
      $typeName: SearchResponseSchema.typeName, query: r.query, scope: scopeOut(r.scope), page: r.page, total: BigInt(r.total), nresults: r.nresults,
      results: r.results.map((h): Result => ({ $typeName: ResultSchema.typeName, ...h, cid: BigInt(h.cid), score: BigInt(h.score) })),
    };
    if (r.phrase_exact !== undefined) response.phraseExact = r.phrase_exact;
    if (r.did_you_mean !== undefined) response.didYouMean = r.did_you_mean;
    return response;
  }, { encode: encodeSearchResponse, decode: decodeSearchRequest });
  add(search.getDoc, async ({ principal }, req) => {
    const d = await s.search.doc(principal, { cid: req.cid.toString(), scope: scopeIn(req.scope) });
    if (!d.found) throw new NotFoundError(d.error.message, 'cid');
    return create(DocumentSchema, { cid: BigInt(d.cid), url: d.url, title: d.title, truncated: d.truncated, text: d.text });
  });
  add(search.suggest, async ({ principal }, req) => {
    const r = await s.search.suggest(principal, { q: req.q, scope: scopeIn(req.scope) });
    return create(SuggestResponseSchema, { prefix: r.prefix, suggestions: r.suggestions });
  });

  const control = ControlServiceDesc.method;
  add(control.getInventory, ({ principal }) => {
    const inv = s.control.inventory(principal) as {
      inventory: string; source: string; revision: string; generated_at: string; targets: string[]; count: number;
      lifecycle: { build: string; stage: string; promote: string; version_verdict: string; rollback: string };
    };
    return create(InventorySchema, {
      inventory: inv.inventory, source: inv.source, revision: inv.revision, generatedAt: time(inv.generated_at),
      targets: inv.targets, count: inv.count,
      lifecycle: { build: inv.lifecycle.build, stage: inv.lifecycle.stage, promote: inv.lifecycle.promote, versionVerdict: inv.lifecycle.version_verdict, rollback: inv.lifecycle.rollback },
    });
  });
  add(control.getDeployStatus, async ({ principal }, req) => {
    const r = await s.control.status(principal, { target: req.target });
    return create(DeployStatusSchema, { targets: r.targets.map(targetStatus) });
  });
  add(control.getOperation, async ({ principal }, req) => {
    const op = await s.control.getOp(principal, req.opId);
    return create(OperationSchema, {
      opId: op.op_id, target: op.target ?? undefined, kind: opKind(op.kind), state: opState(op.state),
      version: op.version ?? undefined, digest: op.digest ?? undefined, error: op.error ?? undefined, log: op.log,
    });
  });
  const key = (k: string) => ({ idempotencyKey: k === '' ? undefined : k });
  add(control.build, async ({ principal }, req) => accepted(await s.control.build(principal, { target: req.target }, key(req.idempotencyKey))));
  add(control.stage, async ({ principal }, req) =>
    accepted(await s.control.stage(principal, { target: req.target, version: req.version }, key(req.idempotencyKey))));
  add(control.deploy, async ({ principal }, req) => promotion(await s.control.deploy(principal, defined({
    target: req.target, version: req.version, dry_run: req.dryRun || undefined, reason: req.reason,
    expected_generation: req.expectedGeneration === undefined ? undefined : Number(req.expectedGeneration),
  }), key(req.idempotencyKey))));
  add(control.rollback, async ({ principal }, req) => promotion(await s.control.rollback(principal, defined({
    target: req.target, to: req.to, dry_run: req.dryRun || undefined, reason: req.reason,
  }), key(req.idempotencyKey))));
  add(control.reconcile, async ({ principal }, req) =>
    accepted(await s.control.reconcile(principal, defined({ target: req.target }), key(req.idempotencyKey))));
  add(control.restart, async ({ principal }, req) =>
    accepted(await s.control.restart(principal, defined({ target: req.target, reason: req.reason }), key(req.idempotencyKey))));

  add(AuthServiceDesc.method.attenuate, ({ principal, headers, remoteAddress }, req) => {
    const c = s.auth.attenuate(principal, presentedCapabilities(headers)[0], defined({
      rights: req.rights?.rights, targets: req.targets?.targets, ttl_s: req.ttlS,
    }), { address: remoteAddress });
    return create(IssuedCapabilitySchema, {
      cap: c.cap, capId: c.cap_id, rights: c.rights,
      targets: Object.fromEntries(Object.entries(c.targets ?? {}).map(([right, t]) => [right, create(TargetListSchema, { targets: t })])),
      expiresAt: c.expires_at === null ? undefined : time(c.expires_at),
    });
  });

  // Flagging is idempotent by nature (a second flag of the same reference updates it), so the
  // idempotency keys of the trusted methods need no replay store.
  const trusted = TrustedServiceDesc.method;
  add(trusted.flag, async ({ principal }, req) => trustedEntry(await s.trusted.flag(principal, defined({
    url: req.subject.case === 'url' ? req.subject.value : undefined,
    cid: req.subject.case === 'cid' ? req.subject.value.toString() : undefined,
    note: req.note,
  }))));
  add(trusted.unflag, async ({ principal }, req) => {
    try {
      await s.trusted.unflag(principal, { cid: req.cid.toString() });
      return create(UnflagResponseSchema, { removed: true });
    } catch (err) {
      if (QuarryError.is(err) && err.code === 'not_found') return create(UnflagResponseSchema, { removed: false });
      throw err;
    }
  });
  add(trusted.list, ({ principal }, req) => {
    const r = s.trusted.list(principal, { page: String(req.page) });
    return create(ListTrustedResponseSchema, { page: r.page, total: BigInt(r.total), entries: r.flags.map(trustedEntry) });
  });
  return table;
}

const TRUSTED_STATES = { pending: TrustedState.PENDING, fetched: TrustedState.FETCHED, failed: TrustedState.FAILED } as const;

function trustedEntry(f: FlagResource) {
  return create(TrustedEntrySchema, {
    cid: BigInt(f.cid), url: f.url ?? '', flaggedBy: f.flagged_by.account ?? f.flagged_by.cap_id ?? '',
    flaggedAt: time(f.flagged_at), state: TRUSTED_STATES[f.state],
    ...(f.title !== null ? { title: f.title } : {}), ...(f.note !== null ? { note: f.note } : {}), ...(f.error !== undefined ? { error: f.error } : {}),
  });
}

/** Unset and `SCOPE_OWN` → the own corpus (absent); web, trusted; any other number reaches the service as sent. */
function scopeIn(scope: Scope): unknown {
  switch (scope) {
    case Scope.UNSPECIFIED: case Scope.OWN: return undefined;
    case Scope.WEB: return 'web';
    case Scope.TRUSTED: return 'trusted';
    default: return scope;
  }
}

function scopeOut(scope: string): Scope { return enumValue(ScopeSchema, 'SCOPE_', scope); }
function opKind(kind: string) { return enumValue(OperationKindSchema, 'OPERATION_KIND_', kind); }
function opState(state: string) { return enumValue(OperationStateSchema, 'OPERATION_STATE_', state); }

/** The enum value named `<prefix><NAME>` (REST's lower-case string upper-cased); 0 (unspecified) if none. */
function enumValue<E extends number>(desc: DescEnum, prefix: string, name: string): E {
  return (desc.values.find((v) => v.name === prefix + name.toUpperCase())?.number ?? 0) as E;
}

function time(iso: string): Timestamp { return timestampFromDate(new Date(iso)); }

/** The object without its undefined members (the control schemas refuse unknown and null-less fields alike). */
function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function targetStatus(t: TargetStatus) {
  return {
    target: t.target, verdict: enumValue(VerdictSchema, 'VERDICT_', t.verdict), sync: enumValue(SyncStatusSchema, 'SYNC_STATUS_', t.sync),
    health: enumValue(HealthStatusSchema, 'HEALTH_STATUS_', t.health),
    desired: t.desired ?? undefined,
    live: t.live === null ? undefined : { version: t.live.version, digest: t.live.digest ?? undefined, path: t.live.path, endpoint: t.live.endpoint },
    generation: BigInt(t.generation),
    lock: t.lock === null ? undefined : { opId: t.lock.op_id, kind: opKind(t.lock.kind), since: t.lock.since === null ? undefined : time(t.lock.since) },
    lastOp: t.last_op === null ? undefined : { opId: t.last_op.op_id, kind: opKind(t.last_op.kind), state: opState(t.last_op.state), updatedAt: time(t.last_op.updated_at) },
    stableVersions: t.stable_versions, reasons: t.reasons,
  };
}

function acceptedInit(a: OpAnswer) {
  return { opId: a.op_id, target: a.target ?? undefined, kind: opKind(a.kind), state: opState(a.state) };
}

function accepted(r: Submitted<OpAnswer>) { return create(OperationAcceptedSchema, acceptedInit(r.answer)); }

function promotion(r: Submitted) {
  const a = r.answer;
  if ('dry_run' in a) {
    const plan = a as PlanAnswer;
    return create(PromotionSchema, { result: { case: 'plan', value: { target: plan.target, kind: opKind(plan.kind), plan: plan.plan as JsonObject } } });
  }
  return create(PromotionSchema, { result: { case: 'accepted', value: acceptedInit(a) } });
}
