/**
 * TEST ONLY: the fixture tools, resources and prompts the official MCP conformance suite calls by name
 * (`test_simple_text`, `test://static-text`, `test_simple_prompt`, …), with the answers its reference
 * server gives. Loaded only when `QUARRY_MCP_TEST_FIXTURES=1` (see index.ts); a running Quarry never
 * lists them otherwise. They touch no service and no data.
 */
import { BadRequestError } from '../kernel/errors.js';
import type { Catalog, ContentBlock, ResourceContents, Tool, ToolResult } from './catalog.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (t: string): ContentBlock => ({ type: 'text', text: t });
const EMPTY_INPUT = { type: 'object', properties: {} };

function tool(name: string, description: string, call: Tool['call'], extra: Partial<Tool> = {}, inputSchema: Record<string, unknown> = EMPTY_INPUT): Tool {
  return { definition: { name, description, inputSchema }, call, ...extra };
}

const result = (...content: ContentBlock[]): ToolResult => ({ content });

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
    read(uri) {
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
    ],
    complete(ref) {
      if (ref.type === 'ref/prompt' ? ref.name.startsWith('test_') : ref.uri.startsWith('test://')) return [];
      return undefined;
    },
  };
}
