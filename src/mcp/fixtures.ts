/**
 * TEST ONLY: the fixture tools, resources and prompts the official MCP conformance suite calls by name
 * (`test_simple_text`, `test://static-text`, `test_simple_prompt`, …), with the answers its reference
 * server gives. Loaded only when `QUARRY_MCP_TEST_FIXTURES=1` (see index.ts); a running Quarry never
 * lists them otherwise. They touch no service and no data.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { BadRequestError } from '../kernel/errors.js';
import type { Catalog, ContentBlock, InputRequired, ResourceContents, RetryInput, Tool, ToolResult } from './catalog.js';
import { INVALID_PARAMS, RpcError } from './jsonrpc.js';
import { META } from './protocol.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

/** An input schema using the 2020-12 vocabulary a server must pass through untouched ($defs, $anchor, if/then/else). */
const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: {
    name: { type: 'string' }, address: { $ref: '#/$defs/address' }, contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' }, email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (t: string): ContentBlock => ({ type: 'text', text: t });
const EMPTY_INPUT = { type: 'object', properties: {} };

function tool(name: string, description: string, call: Tool['call'], extra: Partial<Tool> = {}, inputSchema: Record<string, unknown> = EMPTY_INPUT): Tool {
  return { definition: { name, description, inputSchema }, call, ...extra };
}

const result = (...content: ContentBlock[]): ToolResult => ({ content });

// ── 2026-07-28 multi-round requests (the suite's input-required scenarios) ──
const SECRET = randomBytes(32);
const sign = (payload: Record<string, unknown>) => {
  const data = JSON.stringify(payload);
  return JSON.stringify({ data, hmac: createHmac('sha256', SECRET).update(data).digest('hex') });
};
function verify(raw: string): Record<string, unknown> | undefined {
  try {
    const { data, hmac } = JSON.parse(raw) as { data: string; hmac: string };
    if (createHmac('sha256', SECRET).update(data).digest('hex') !== hmac) return undefined;
    return JSON.parse(data) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
const parseState = (raw: string | undefined): Record<string, unknown> | undefined => {
  if (raw === undefined) return undefined;
  try { return JSON.parse(raw) as Record<string, unknown>; } catch { return undefined; }
};
const field = (response: unknown, name: string): string => {
  const v = ((response as Record<string, unknown> | undefined)?.content as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : 'unknown';
};
const ask = (inputRequests: Record<string, unknown>, requestState?: string): InputRequired =>
  ({ resultType: 'input_required', inputRequests, ...(requestState !== undefined ? { requestState } : {}) });
const elicit = (message: string, properties: Record<string, unknown>, required: string[]) =>
  ({ method: 'elicitation/create', params: { message, requestedSchema: { type: 'object', properties, required } } });
const sample = (prompt: string, maxTokens: number) =>
  ({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens } });
const ROOTS = { method: 'roots/list', params: {} };
const rootsOf = (r: unknown) => { const roots = (r as Record<string, unknown> | undefined)?.roots; return Array.isArray(roots) ? roots.length : 0; };

function mrtr(name: string, description: string, call: (r: RetryInput, caps: Record<string, unknown>) => ToolResult | InputRequired): Tool {
  return tool(name, description, async (_args, ctx) => call(ctx.retry, ctx.lane.clientCapabilities));
}

// ── handshake era: requests to the client on the call's event stream (sampling, elicitation) ──
function clientRequestTools(): Tool[] {
  const streams = { streams: () => true };
  const via = async (ctx: Parameters<Tool['call']>[1], method: string, params: Record<string, unknown>, show: (r: Record<string, unknown>) => string, what: string) => {
    if (!ctx.request) return result(text(`${what} not supported or error: no event stream`));
    try {
      return result(text(show(await ctx.request(method, params))));
    } catch (err) {
      return result(text(`${what} not supported or error: ${(err as Error).message}`));
    }
  };
  const elicitation = (r: Record<string, unknown>, label: string) => `${label}: action=${String(r.action)}, content=${JSON.stringify(r.content ?? {})}`;
  const form = (message: string, properties: Record<string, unknown>) => ({ message, requestedSchema: { type: 'object', properties, required: [] } });
  return [
    tool('test_sampling', 'Tests server-initiated sampling (LLM completion request)', async (args, ctx) =>
      via(ctx, 'sampling/createMessage', { messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt ?? '') } }], maxTokens: 100 }, (r) => {
        const c = r.content as Record<string, unknown> | undefined;
        return `LLM response: ${typeof c?.text === 'string' ? c.text : 'No response'}`;
      }, 'Sampling'), streams, { type: 'object', properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } }, required: ['prompt'] }),
    tool('test_elicitation', 'Tests server-initiated elicitation (user input request)', async (args, ctx) =>
      via(ctx, 'elicitation/create', {
        message: String(args.message ?? ''),
        requestedSchema: { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] },
      }, (r) => elicitation(r, 'User response'), 'Elicitation'), streams, { type: 'object', properties: { message: { type: 'string', description: 'The message to show the user' } }, required: ['message'] }),
    tool('test_elicitation_sep1034_defaults', 'Tests elicitation with default values per SEP-1034', async (_args, ctx) =>
      via(ctx, 'elicitation/create', form('Please review and update the form fields with defaults', {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      }), (r) => elicitation(r, 'Elicitation completed'), 'Elicitation'), streams),
    tool('test_elicitation_sep1330_enums', 'Tests elicitation with enum schema improvements per SEP-1330', async (_args, ctx) =>
      via(ctx, 'elicitation/create', form('Please select options from the enum fields', {
        untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
        titledSingle: { type: 'string', description: 'Select one option with titles', oneOf: [
          { const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }] },
        legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: { type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: { type: 'array', description: 'Select multiple options with titles', minItems: 1, maxItems: 3, items: { anyOf: [
          { const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] } },
      }), (r) => elicitation(r, 'Elicitation completed'), 'Elicitation'), streams),
  ];
}

function mrtrTools(): Tool[] {
  const confirm = elicit('Please confirm', { ok: { type: 'boolean' } }, ['ok']);
  return [
    mrtr('test_input_required_result_elicitation', 'MRTR: returns InputRequiredResult with elicitation request', ({ inputResponses: r }) =>
      r?.user_name ? result(text(`Hello, ${field(r.user_name, 'name')}!`)) : ask({ user_name: elicit('What is your name?', { name: { type: 'string' } }, ['name']) })),
    mrtr('test_input_required_result_sampling', 'MRTR: returns InputRequiredResult with sampling request', ({ inputResponses: r }) => {
      if (!r?.sample_request) return ask({ sample_request: sample('What is the capital of France?', 100) });
      const c = (r.sample_request as Record<string, unknown>).content as Record<string, unknown> | undefined;
      return result(text(`Sampling result: ${typeof c?.text === 'string' ? c.text : 'no response'}`));
    }),
    mrtr('test_input_required_result_list_roots', 'MRTR: returns InputRequiredResult with roots/list request', ({ inputResponses: r }) =>
      r?.roots_request ? result(text(`Found ${rootsOf(r.roots_request)} root(s)`)) : ask({ roots_request: ROOTS })),
    mrtr('test_input_required_result_request_state', 'MRTR: returns InputRequiredResult with requestState', ({ inputResponses: r, requestState }) => {
      const state = parseState(requestState);
      const ok = ((r?.confirm as Record<string, unknown> | undefined)?.content as Record<string, unknown> | undefined)?.ok;
      if (state?.kind === 'request-state' && ok === true) return result(text('state-ok: requestState validated'));
      return ask({ confirm }, JSON.stringify({ kind: 'request-state', nonce: randomUUID() }));
    }),
    mrtr('test_input_required_result_multiple_inputs', 'MRTR: returns InputRequiredResult with multiple input requests', ({ inputResponses: r, requestState }) => {
      if (parseState(requestState)?.kind === 'multiple-inputs' && r?.user_name && r.greeting && r.client_roots) {
        const g = (r.greeting as Record<string, unknown>).content as Record<string, unknown> | undefined;
        return result(text(`Name: ${field(r.user_name, 'name')}; Greeting: ${typeof g?.text === 'string' ? g.text : 'Hello there!'}; Roots: ${rootsOf(r.client_roots)}`));
      }
      return ask({
        user_name: elicit('What is your name?', { name: { type: 'string' } }, ['name']),
        greeting: sample('Generate a greeting', 50),
        client_roots: ROOTS,
      }, JSON.stringify({ kind: 'multiple-inputs', nonce: randomUUID() }));
    }),
    mrtr('test_input_required_result_multi_round', 'MRTR: multi-round InputRequiredResult workflow', ({ inputResponses: r, requestState }) => {
      const step1 = () => ask({ step1: elicit('Step 1: What is your name?', { name: { type: 'string' } }, ['name']) }, JSON.stringify({ round: 1, nonce: randomUUID() }));
      const state = parseState(requestState);
      if (state?.round === 1 && r?.step1) {
        return ask({ step2: elicit('Step 2: What is your favorite color?', { color: { type: 'string' } }, ['color']) },
          JSON.stringify({ round: 2, name: field(r.step1, 'name'), nonce: randomUUID() }));
      }
      if (state?.round === 2 && r?.step2) return result(text(`Multi-round complete for ${typeof state.name === 'string' ? state.name : 'friend'} who likes ${field(r.step2, 'color')}`));
      return step1();
    }),
    mrtr('test_input_required_result_tampered_state', 'MRTR: HMAC-signed requestState integrity test', ({ inputResponses: r, requestState }) => {
      if (requestState !== undefined) {
        const state = verify(requestState);
        if (!state) throw new RpcError(INVALID_PARAMS, 'requestState integrity check failed');
        if (state.kind === 'tamper-test' && r?.confirm) return result(text('integrity-ok: state verified'));
      }
      return ask({ confirm }, sign({ kind: 'tamper-test', nonce: randomUUID() }));
    }),
    mrtr('test_input_required_result_capabilities', 'MRTR: respects client capabilities in inputRequests', ({ inputResponses: r }, caps) => {
      if (r && Object.keys(r).length > 0) return result(text(`capabilities-ok: received ${Object.keys(r).join(',')}`));
      const requests: Record<string, unknown> = {};
      if (caps.elicitation) requests.elicit_input = elicit('Elicitation input', { value: { type: 'string' } }, ['value']);
      if (caps.sampling) requests.sample_input = sample('Sample request', 50);
      if (Object.keys(requests).length === 0) return result(text('No supported capabilities declared'));
      return ask(requests, sign({ kind: 'capabilities-test', nonce: randomUUID() }));
    }),
    tool('test_streaming_elicitation', 'Diagnostic tool validating response progress streams', async (_args, ctx) => {
      ctx.notify('notifications/progress', { progressToken: ctx.progressToken ?? 'token-abc', progress: 50, total: 100 });
      return result(text('Streaming complete'));
    }, { streams: () => true }),
    tool('test_logging_tool', 'Diagnostic logging validator tool', async (_args, ctx) => {
      // 2026-07-28: log notifications only when the request's _meta asks for a level.
      if (ctx.meta[META.logLevel] !== undefined) ctx.notify('notifications/message', { level: 'info', data: 'Diagnostic trace logging activated' });
      return result(text('Logging evaluated'));
    }, { streams: () => true }),
  ];
}

export function fixtureCatalog(): Catalog {
  const tools: Tool[] = [
    tool('test_simple_text', 'Tests simple text content response', async () => result(text('This is a simple text response for testing.'))),
    tool('test_image_content', 'Tests image content response', async () => result({ type: 'image', data: PNG, mimeType: 'image/png' })),
    tool('test_audio_content', 'Tests audio content response', async () => result({ type: 'audio', data: WAV, mimeType: 'audio/wav' })),
    tool('test_embedded_resource', 'Tests embedded resource content response', async () => result({
      type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
    })),
    tool('test_multiple_content_types', 'Tests response with multiple content types (text, image, resource)', async () => result(
      text('Multiple content types test:'),
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
    )),
    tool('test_tool_with_logging', 'Tests tool that emits log messages during execution', async (_args, ctx) => {
      for (const [i, m] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
        if (i > 0) await sleep(50);
        ctx.notify('notifications/message', { level: 'info', data: m });
      }
      return result(text('Tool with logging executed successfully'));
    }, { streams: () => true }),
    tool('test_tool_with_progress', 'Tests tool that reports progress notifications', async (_args, ctx) => {
      const progressToken = ctx.progressToken ?? 0;
      for (const p of [0, 50, 100]) {
        if (p > 0) await sleep(50);
        ctx.notify('notifications/progress', { progressToken, progress: p, total: 100, message: `Completed step ${p} of 100` });
      }
      return result(text(String(progressToken)));
    }, { streams: () => true }),
    tool('test_error_handling', 'Tests error response handling', async () => {
      throw new BadRequestError('This tool intentionally returns an error for testing');
    }),
    tool('test_missing_capability', 'Needs the client capability sampling (answers -32021 without it)', async () => result(text('sampling declared')), { requires: ['sampling'] }),
    ...mrtrTools(),
    ...clientRequestTools(),
    tool('json_schema_2020_12_tool', 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
      async (args) => result(text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)), {}, JSON_SCHEMA_2020_12),
  ];

  const resources: Record<string, ResourceContents & { name: string; title: string; description: string }> = {
    'test://static-text': { uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource', description: 'A static text resource for testing', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    'test://static-binary': { uri: 'test://static-binary', name: 'static-binary', title: 'Static Binary Resource', description: 'A static binary resource (image) for testing', mimeType: 'image/png', blob: PNG },
    'test://watched-resource': { uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched Resource', description: 'A resource for subscription tests', mimeType: 'text/plain', text: 'Watched resource content' },
  };

  return {
    tools,
    resources: () => Object.values(resources).map(({ uri, name, title, description, mimeType }) => ({ uri, name, title, description, ...(mimeType ? { mimeType } : {}) })),
    templates: [{ uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json' }],
    async read(uri) {
      const r = resources[uri];
      if (r) {
        const { name: _n, title: _t, description: _d, ...contents } = r;
        return [contents];
      }
      const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
      if (m) return [{ uri, mimeType: 'application/json', text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) }];
      return undefined;
    },
    prompts: [
      { definition: { name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A simple prompt without arguments' },
        get: () => ({ messages: [{ role: 'user', content: text('This is a simple prompt for testing.') }] }) },
      { definition: { name: 'test_prompt_with_arguments', title: 'Prompt With Arguments', description: 'A prompt with required arguments', arguments: [
        { name: 'arg1', description: 'First test argument', required: true }, { name: 'arg2', description: 'Second test argument', required: true }] },
        get: (a) => ({ messages: [{ role: 'user', content: text(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`) }] }) },
      { definition: { name: 'test_prompt_with_embedded_resource', title: 'Prompt With Embedded Resource', description: 'A prompt that includes an embedded resource', arguments: [
        { name: 'resourceUri', description: 'URI of the resource to embed', required: true }] },
        get: (a) => ({ messages: [
          { role: 'user', content: { type: 'resource', resource: { uri: a.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
          { role: 'user', content: text('Please process the embedded resource above.') },
        ] }) },
      { definition: { name: 'test_prompt_with_image', title: 'Prompt With Image', description: 'A prompt that includes image content' },
        get: () => ({ messages: [
          { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
          { role: 'user', content: text('Please analyze the image above.') },
        ] }) },
      { definition: { name: 'test_input_required_result_prompt', description: 'MRTR: prompt that requires elicitation input' },
        get: (_a, _p, { inputResponses: r }) => (r?.user_context
          ? { messages: [{ role: 'user', content: text(`Prompt with context: ${field(r.user_context, 'context')}`) }] }
          : ask({ user_context: elicit('What context should the prompt use?', { context: { type: 'string' } }, ['context']) })) },
    ],
    // Subscriptions acknowledged for the suite; no update is ever sent (there is no session to send it on).
    methods: { 'resources/subscribe': () => ({}), 'resources/unsubscribe': () => ({}) },
    async complete(ref) {
      if (ref.type === 'ref/prompt' ? ref.name.startsWith('test_') : ref.uri.startsWith('test://')) return [];
      return undefined;
    },
  };
}
