/**
 * What the MCP face serves, as data plus functions: tools, resources (listed ones and templates),
 * prompts and completions. `quarry.ts` builds Quarry's own catalog over the application services; a
 * test-only fixture catalog (`fixtures.ts`) can be added beside it. The handler (`handler.ts`) merges
 * catalogs and speaks the protocol; a catalog never sees JSON-RPC.
 */
import type { Principal } from '../kernel/principal.js';
import type { Lane } from './protocol.js';

export type ContentBlock = Record<string, unknown> & { type: string };

export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * 2026-07-28 multi-round requests: instead of a result, what the client must supply first (it retries
 * the request with `inputResponses` and the opaque `requestState`).
 */
export interface InputRequired {
  resultType: 'input_required';
  inputRequests: Record<string, unknown>;
  requestState?: string;
}

/** What a retried multi-round request carries (`params.inputResponses`, `params.requestState`). */
export interface RetryInput {
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

export interface CallContext {
  principal: Principal;
  lane: Lane;
  /** Aborted when the client goes away or the server drains. */
  signal: AbortSignal;
  /** `params._meta.progressToken`, when the client asked for progress. */
  progressToken?: string | number;
  /** Sends a notification on this request's event stream (a no-op when the answer is plain JSON). */
  notify(method: string, params: Record<string, unknown>): void;
  /**
   * Handshake era, event-stream answers only: sends a request to the client on this request's stream and
   * resolves with the client's answer (which it POSTs as a JSON-RPC response). Undefined otherwise.
   */
  request?(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** `params._meta` as sent (the capability keys removed). */
  meta: Record<string, unknown>;
  retry: RetryInput;
}

export interface Tool {
  /** name, title, description, inputSchema, outputSchema, annotations, _meta — as `tools/list` shows it. */
  definition: Record<string, unknown> & { name: string };
  /** Whether `tools/list` shows it to this caller (a call is still checked by the service). */
  visible?(principal: Principal): boolean;
  /** Client capabilities the call needs (2026-07-28 answers -32021 when one was not declared). */
  requires?: readonly string[];
  /** Whether this call answers as an event stream (it sends notifications before its result). */
  streams?(args: Record<string, unknown>, ctx: { progressToken?: string | number; lane: Lane }): boolean;
  call(args: Record<string, unknown>, ctx: CallContext): Promise<ToolResult | InputRequired>;
}

export interface ResourceEntry {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

export type ResourceContents = { uri: string; mimeType?: string } & ({ text: string } | { blob: string });

export interface Prompt {
  definition: { name: string; title?: string; description?: string; arguments?: { name: string; description?: string; required?: boolean }[] };
  /** The messages; throws BadRequestError for a missing or bad argument. */
  get(args: Record<string, string>, principal: Principal, retry: RetryInput): { description?: string; messages: Record<string, unknown>[] } | InputRequired;
}

export type CompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

export interface Catalog {
  tools: Tool[];
  /** Listed resources for this caller, in a stable order. */
  resources(principal: Principal): ResourceEntry[];
  templates: ResourceTemplate[];
  /** The contents of `uri`, or undefined when this catalog has no such resource. */
  read(uri: string, principal: Principal): Promise<ResourceContents[] | undefined>;
  prompts: Prompt[];
  /** Further methods this catalog answers (params → result), e.g. the fixtures' `resources/subscribe`. */
  methods?: Record<string, (params: Record<string, unknown>) => Record<string, unknown>>;
  /** Completions of one argument, or undefined when the reference is not this catalog's. */
  complete?(ref: CompletionRef, argument: { name: string; value: string }, context: Record<string, string>, principal: Principal): Promise<string[] | undefined>;
}

/** A tool result carrying a resource: `structuredContent` plus the same JSON as text for older clients. */
export function structuredResult(value: Record<string, unknown>, toText: (v: unknown) => string, isError = false): ToolResult {
  const out: ToolResult = { content: [{ type: 'text', text: toText(value) }], structuredContent: value };
  if (isError) out.isError = true;
  return out;
}
