/**
 * Quarry's MCP catalog (interface §4.5, CONTRACT §7) over the application services: it only translates
 * tool arguments, resource URIs and prompt arguments into service calls and returns the services'
 * resources unchanged, so `service_search`'s `structuredContent` is byte for byte `GET /api/search`'s body.
 *
 * Tools: `service_search`, `service_doc`, `service_ecosystem_maturity_rollup` (live) and `service_mgmt`
 * (admin: listed only to a capability holding a `mgmt.*` right; the control plane checks every call).
 * Resources: the inventory, the OpenAPI document, the RPC contract (when the face is given one), documents
 * by `doc://{scope}/{cid}`, and the maturity of each domain by `quarry://maturity/{domain}`.
 * Prompts: `research` (search, read, cite by cid) and `deployment` (status, plan with a dry run, deploy).
 */
import { CID_PATTERN } from '../kernel/cid.js';
import { BadRequestError, NotFoundError } from '../kernel/errors.js';
import { toJson } from '../kernel/json.js';
import { requirePublic, type Principal } from '../kernel/principal.js';
import { SCOPES } from '../kernel/scope.js';
import type { RollupService } from '../rollup/service.js';
import { rollupSchema } from '../rollup/service.js';
import type { SearchService } from '../search/service.js';
import {
  structuredResult, type Catalog, type CompletionRef, type Prompt, type ResourceContents, type ResourceEntry, type Tool,
} from './catalog.js';
import { jsonSchemaFrom } from './schemas.js';

/**
 * What `service_mgmt`, the inventory resource and target completion need of the control plane: the
 * operations of the control service (`src/control/service.ts`), which holds every rule (allowlist first,
 * target-scoped rights, body schemas, audit). Each takes the caller and the body as REST would send it.
 */
export interface MgmtPort {
  build(principal: Principal, input: unknown): Promise<{ answer: object }>;
  deploy(principal: Principal, input: unknown): Promise<{ answer: object }>;
  rollback(principal: Principal, input: unknown): Promise<{ answer: object }>;
  reconcile(principal: Principal, input: unknown): Promise<{ answer: object }>;
  restart(principal: Principal, input: unknown): Promise<{ answer: object }>;
  status(principal: Principal, input: { target?: string | null }): Promise<object>;
  /** `GET /api/ops/{op_id}`. */
  getOp(principal: Principal, opId: string): Promise<object>;
  /** `GET /api/inventory`. */
  inventory(principal: Principal): Record<string, unknown>;
}

/** A file of the binary RPC contract, when the repository has one. */
export interface RpcContract { mimeType: string; text: string }

export interface QuarryCatalogDeps {
  search: SearchService;
  rollup: RollupService;
  mgmt?: MgmtPort;
  /** The served OpenAPI document. */
  openapi(): Record<string, unknown>;
  /** The RPC contract, or undefined while there is none. */
  rpcContract(): RpcContract | undefined;
  /** How often a long `service_mgmt` operation's state is polled for progress notifications. Default 200 ms. */
  progressIntervalMs?: number;
}

export const META_LIVE = 'dev.quarry/live';
export const META_ADMIN = 'dev.quarry/admin';
const MGMT_ACTIONS = ['build', 'deploy', 'rollback', 'reconcile', 'restart', 'status'] as const;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

const INVENTORY_URI = 'quarry://inventory';
const OPENAPI_URI = 'quarry://openapi.json';
const RPC_CONTRACT_URI = 'quarry://rpc.contract';
const DOC_TEMPLATE = 'doc://{scope}/{cid}';
const MATURITY_TEMPLATE = 'quarry://maturity/{domain}';
const MATURITY_PREFIX = 'quarry://maturity/';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export function quarryCatalog(d: QuarryCatalogDeps): Catalog {
  const schemas = d.search.schemas();
  const scopeArg = { type: 'string', enum: SCOPES.filter((s) => s !== 'own'), description: '`web`: the crawled open web; `trusted`: flagged references. Absent: the own corpus.' };
  const text = (v: unknown) => toJson(v);

  const tools: Tool[] = [
    {
      definition: {
        name: 'service_search', title: 'Search',
        description: `Full-text search of one corpus (integer BM25), ${d.search.limits.pageSize} results per page. Query language: terms (OR), +required, -excluded, "phrases", site:host. The answer is GET /api/search's body.`,
        inputSchema: {
          type: 'object', required: ['q'],
          properties: {
            q: { type: 'string', minLength: 1, description: 'The query.' },
            scope: scopeArg,
            page: { type: 'integer', minimum: 0, description: '0-based page.' },
          },
        },
        outputSchema: jsonSchemaFrom(schemas, 'SearchResponse'),
        annotations: { title: 'Search', ...READ_ONLY },
      },
      async call(args, ctx) {
        return structuredResult({ ...await d.search.search(ctx.principal, { q: args.q, scope: args.scope, page: args.page }) }, text);
      },
    },
    {
      definition: {
        name: 'service_doc', title: 'Fetch a document',
        description: 'One document by content id (a decimal string), its text cut at 1 MiB. The answer is GET /api/doc\'s body; a cid with no document is an error result carrying found: false.',
        inputSchema: {
          type: 'object', required: ['cid'],
          properties: { cid: { type: 'string', pattern: CID_PATTERN, description: 'Decimal content id, at most 2^63−1.' }, scope: scopeArg },
        },
        outputSchema: jsonSchemaFrom(schemas, ['Doc', 'DocNotFound']),
        annotations: { title: 'Fetch a document', ...READ_ONLY },
      },
      async call(args, ctx) {
        const doc = await d.search.doc(ctx.principal, { cid: args.cid, scope: args.scope });
        return structuredResult({ ...doc }, text, !doc.found);
      },
    },
    {
      definition: {
        name: 'service_ecosystem_maturity_rollup', title: 'Ecosystem maturity rollup',
        description: 'Grade A–F of a domain (or of the domains with the most documents), measured now from the live indexes and crawl records: document counts per corpus, trusted flags, freshness, fetch error and duplicate rates (null until measured). Rubric in docs/mcp.md.',
        inputSchema: { type: 'object', properties: { domain: { type: 'string', description: 'A host such as example.com (subdomains included). Absent: every domain, most documents first.' } } },
        outputSchema: rollupSchema(),
        annotations: { title: 'Ecosystem maturity rollup', ...READ_ONLY },
        _meta: { [META_LIVE]: true },
      },
      async call(args, ctx) {
        return structuredResult({ ...d.rollup.rollup(ctx.principal, { domain: args.domain }) }, text);
      },
    },
  ];

  const mgmt = d.mgmt;
  if (mgmt) tools.push(mgmtTool(mgmt, text, d.progressIntervalMs ?? 200));

  const staticResources = (principal: Principal): ResourceEntry[] => {
    const out: ResourceEntry[] = [];
    if (mgmt && principal.can('mgmt.read')) {
      out.push({ uri: INVENTORY_URI, name: 'inventory', title: 'Deployable artifact inventory', description: 'GET /api/inventory: the managed targets, derived from the allowlist.', mimeType: 'application/json' });
    }
    out.push({ uri: OPENAPI_URI, name: 'openapi', title: 'OpenAPI description', description: 'GET /api/openapi.json: the REST interface.', mimeType: 'application/json' });
    const rpc = d.rpcContract();
    if (rpc) out.push({ uri: RPC_CONTRACT_URI, name: 'rpc-contract', title: 'Binary RPC contract', description: 'GET /api/rpc.contract: the protobuf contract of POST /api/rpc.', mimeType: rpc.mimeType });
    return out;
  };

  async function read(uri: string, principal: Principal): Promise<ResourceContents[] | undefined> {
    if (uri === INVENTORY_URI && mgmt) return [{ uri, mimeType: 'application/json', text: text(mgmt.inventory(principal)) }];
    if (uri === OPENAPI_URI) {
      requirePublic(principal);
      return [{ uri, mimeType: 'application/json', text: text(d.openapi()) }];
    }
    if (uri === RPC_CONTRACT_URI) {
      requirePublic(principal);
      const rpc = d.rpcContract();
      return rpc ? [{ uri, mimeType: rpc.mimeType, text: rpc.text }] : undefined;
    }
    const docUri = /^doc:\/\/([^/]*)\/([^/]*)$/.exec(uri);
    if (docUri) {
      const scope = docUri[1]!;
      if (!(SCOPES as readonly string[]).includes(scope)) return undefined;
      const cid = decodeSegment(docUri[2]!);
      if (cid === undefined) return undefined;
      const doc = await d.search.doc(principal, { cid, scope: scope === 'own' ? undefined : scope });
      if (!doc.found) throw new NotFoundError(doc.error.message, 'uri');
      return [{ uri, mimeType: 'application/json', text: text(doc) }];
    }
    if (uri.startsWith(MATURITY_PREFIX)) {
      const domain = decodeSegment(uri.slice(MATURITY_PREFIX.length));
      if (domain === undefined) return undefined;
      return [{ uri, mimeType: 'application/json', text: text(d.rollup.rollup(principal, { domain })) }];
    }
    return undefined;
  }

  const prompts: Prompt[] = [
    {
      definition: {
        name: 'research', title: 'Research with citations',
        description: 'Answer a question from Quarry\'s corpora: search, read the best documents, cite each claim by cid.',
        arguments: [
          { name: 'question', description: 'What to find out.', required: true },
          { name: 'scope', description: '`web`, `trusted`, or empty for the own corpus.', required: false },
        ],
      },
      get(args) {
        const question = requiredArg(args, 'question');
        const scope = optionalScope(args.scope);
        const scopeText = scope ? ` with scope "${scope}"` : '';
        return {
          description: `Research: ${question}`,
          messages: [{
            role: 'user',
            content: {
              type: 'text',
              text: [
                `Question: ${question}`,
                '',
                `1. Call service_search${scopeText} with a short keyword query for the question (use +required terms, "phrases" and site:host when they help; try a second wording or a did_you_mean if the first finds little).`,
                `2. Read the two to five most relevant results with service_doc {cid${scope ? `, scope: "${scope}"` : ''}} (or the resource doc://${scope ?? 'own'}/{cid}).`,
                '3. Answer only from what you read. After every claim cite its source as [cid:<cid>]; list the cids with their titles and URLs at the end.',
                '4. If the documents do not answer the question, say so rather than guessing.',
              ].join('\n'),
            },
          }],
        };
      },
    },
    {
      definition: {
        name: 'deployment', title: 'Deploy a target safely',
        description: 'Deploy one managed target: read its status, plan with a dry run, deploy, verify.',
        arguments: [
          { name: 'target', description: 'A target of the inventory.', required: true },
          { name: 'version', description: 'The version to deploy; empty for the newest staged one.', required: false },
        ],
      },
      get(args) {
        const target = requiredArg(args, 'target');
        const version = args.version !== undefined && args.version !== '' ? args.version : undefined;
        const v = version ? `, version: "${version}"` : '';
        return {
          description: `Deploy ${target}${version ? ` ${version}` : ''}`,
          messages: [{
            role: 'user',
            content: {
              type: 'text',
              text: [
                `Deploy the target "${target}"${version ? ` at version ${version}` : ''}.`,
                '',
                `1. Status: call service_mgmt {action: "status", target: "${target}"} and report the verdict, the live and desired versions and any lock.`,
                `2. Plan: call service_mgmt {action: "deploy", target: "${target}"${v}, dry_run: true} and show the plan. Stop if the target is locked, degraded for a reason the plan does not fix, or the version is not staged.`,
                `3. Ask for confirmation, then call service_mgmt {action: "deploy", target: "${target}"${v}, reason: "<why>"}.`,
                `4. Verify: call service_mgmt {action: "status", target: "${target}"} until the verdict is in_sync or failed; on failure report the reasons (a failed promotion is rolled back automatically).`,
              ].join('\n'),
            },
          }],
        };
      },
    },
  ];

  async function complete(ref: CompletionRef, argument: { name: string; value: string }, context: Record<string, string>, principal: Principal): Promise<string[] | undefined> {
    const prefix = (list: readonly string[]) => list.filter((s) => s.startsWith(argument.value));
    if (ref.type === 'ref/prompt') {
      if (ref.name === 'research') {
        if (argument.name === 'scope') return prefix(['web', 'trusted']);
        if (argument.name === 'question') return completeTerms(argument.value, context.scope, principal);
        return [];
      }
      if (ref.name === 'deployment') {
        if (argument.name === 'target') return mgmt ? prefix(readableTargets(mgmt, principal)) : [];
        return [];
      }
      return undefined;
    }
    if (ref.uri === DOC_TEMPLATE) return argument.name === 'scope' ? prefix(SCOPES) : [];
    if (ref.uri === MATURITY_TEMPLATE) return argument.name === 'domain' ? prefix(d.rollup.domains(principal)) : [];
    return undefined;
  }

  /** The text with its last term completed from the corpus (suggest), one value per completion. */
  async function completeTerms(value: string, scope: string | undefined, principal: Principal): Promise<string[]> {
    if (value.trim() === '') return [];
    let suggestions: string[];
    try {
      suggestions = (await d.search.suggest(principal, { q: value, scope: scope === '' || scope === 'own' ? undefined : scope })).suggestions;
    } catch {
      return [];
    }
    const head = value.replace(/[\p{L}\p{N}]*$/u, '');
    return suggestions.map((s) => head + s);
  }

  return {
    tools,
    resources(principal) {
      const out = staticResources(principal);
      let domains: string[] = [];
      try { domains = d.rollup.domains(principal); } catch { /* no right to search: no maturity entries */ }
      for (const domain of domains) {
        out.push({ uri: MATURITY_PREFIX + domain, name: `maturity-${domain}`, title: `Maturity of ${domain}`, mimeType: 'application/json' });
      }
      return out;
    },
    templates: [
      { uriTemplate: DOC_TEMPLATE, name: 'document', title: 'Document by cid', description: 'A document of a corpus (scope own, web or trusted) as GET /api/doc returns it.', mimeType: 'application/json' },
      { uriTemplate: MATURITY_TEMPLATE, name: 'maturity', title: 'Maturity of a domain', description: 'The maturity rollup of one domain, measured when read.', mimeType: 'application/json' },
    ],
    read,
    prompts,
    complete,
  };
}

function mgmtTool(mgmt: MgmtPort, text: (v: unknown) => string, intervalMs: number): Tool {
  const long = (args: Record<string, unknown>) => args.action !== 'status' && args.dry_run !== true;
  return {
    definition: {
      name: 'service_mgmt', title: 'Control plane',
      description: 'Admin: build, deploy, roll back, reconcile or restart a managed target, or read the verdicts (status). Answers as the REST control routes do (an operation id to follow, or the plan of a dry run). With a progressToken, a long operation streams progress and answers with its final state.',
      inputSchema: {
        type: 'object', required: ['action'],
        properties: {
          action: { type: 'string', enum: [...MGMT_ACTIONS] },
          target: { type: 'string', description: 'A target of the inventory (required except for status and reconcile).' },
          version: { type: 'string', description: 'deploy: the version to promote (default: the newest staged); rollback: the version to go back to (default: the previous).' },
          dry_run: { type: 'boolean', description: 'deploy/rollback: answer with the plan and change nothing.' },
          reason: { type: 'string', description: 'Recorded in the audit log.' },
        },
      },
      outputSchema: {
        type: 'object', required: ['v'],
        description: 'An accepted operation {v, op_id, target, kind, state}, its final state (with progress), a dry-run plan {v, dry_run, target, kind, plan}, or the verdicts {v, targets}.',
        properties: { v: { type: 'integer', const: 1 } },
      },
      annotations: { title: 'Control plane', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      _meta: { [META_ADMIN]: true },
    },
    visible: (p) => [...p.rights].some((r) => r.startsWith('mgmt.')),
    streams: (args, ctx) => ctx.progressToken !== undefined && long(args),
    async call(args, ctx) {
      if (typeof args.action !== 'string' || !(MGMT_ACTIONS as readonly string[]).includes(args.action)) {
        throw new BadRequestError(`action must be one of ${MGMT_ACTIONS.join(', ')}.`, 'action');
      }
      const answer = await runAction(mgmt, ctx.principal, args);
      if (ctx.progressToken === undefined || typeof answer.op_id !== 'string' || !long(args)) return structuredResult(answer, text);
      // Follow the operation, one progress notification per state change, and answer with its end.
      const opId = answer.op_id;
      const read = async () => ({ ...await mgmt.getOp(ctx.principal, opId) }) as Record<string, unknown>;
      let view = await read();
      let step = 0;
      let last = '';
      for (;;) {
        const state = String(view.state);
        if (state !== last) {
          last = state;
          ctx.notify('notifications/progress', { progressToken: ctx.progressToken, progress: ++step, message: `${String(view.kind)} ${String(view.target)}: ${state}` });
        }
        if (TERMINAL.has(state) || ctx.signal.aborted) break;
        await new Promise((r) => setTimeout(r, intervalMs));
        view = await read();
      }
      return structuredResult(view, text, view.state === 'failed');
    },
  };
}

/** The tool's arguments as the body of the REST route with the same meaning (only the fields given). */
async function runAction(mgmt: MgmtPort, principal: Principal, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { target, version, dry_run, reason } = args;
  const body = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  switch (args.action) {
    case 'build': return { ...(await mgmt.build(principal, body({ target }))).answer };
    case 'deploy': return { ...(await mgmt.deploy(principal, body({ target, version, dry_run, reason }))).answer };
    case 'rollback': return { ...(await mgmt.rollback(principal, body({ target, to: version, dry_run, reason }))).answer };
    case 'reconcile': return { ...(await mgmt.reconcile(principal, body({ target }))).answer };
    case 'restart': return { ...(await mgmt.restart(principal, body({ target, reason }))).answer };
    default: {
      if (target !== undefined && typeof target !== 'string') throw new BadRequestError('target must be a string.', 'target');
      return { ...(await mgmt.status(principal, target === undefined ? {} : { target })) };
    }
  }
}

/** The targets this caller may read (none without `mgmt.read`). */
function readableTargets(mgmt: MgmtPort, principal: Principal): string[] {
  if (!principal.can('mgmt.read')) return [];
  const targets = mgmt.inventory(principal).targets;
  return Array.isArray(targets) ? targets.filter((t): t is string => typeof t === 'string' && principal.can('mgmt.read', t)) : [];
}

/** A percent-decoded URI segment, or undefined when its escapes are malformed. */
function decodeSegment(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

function requiredArg(args: Record<string, string>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v.trim() === '') throw new BadRequestError(`The argument ${name} is required.`, name);
  return v;
}

function optionalScope(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '' || raw === 'own') return undefined;
  if (raw !== 'web' && raw !== 'trusted') throw new BadRequestError('scope must be web, trusted or empty.', 'scope');
  return raw;
}
