// The official TypeScript SDK client (@modelcontextprotocol/sdk 1.x, Streamable HTTP transport) against a
// real `quarry serve` over TLS: it lists and calls every tool, reads every kind of resource, lists the
// templates, gets every prompt and asks for completions — as an admin capability and anonymously. The SDK
// validates each structuredContent against the tool's outputSchema itself, so a schema that does not
// describe the answer fails here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestServer } from '../support/server.js';
import { rawRequest } from '../support/client.js';
import { FIXTURE } from '../support/fixture-corpus.js';
import { mintCap, startMcpServer, tlsFetch } from './support.js';

let srv: TestServer;
let admin: string;

before(async () => {
  srv = await startMcpServer();
  admin = mintCap(srv, ['search', 'mgmt.read', 'mgmt.deploy', 'mgmt.build']);
});
after(async () => { await srv?.stop(); });

async function connectClient(cap?: string): Promise<Client> {
  const client = new Client({ name: 'quarry-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), {
    fetch: tlsFetch(srv.ca),
    ...(cap ? { requestInit: { headers: { authorization: `Bearer ${cap}` } } } : {}),
  });
  await client.connect(transport);
  return client;
}

const structured = (r: unknown) => (r as { structuredContent: Record<string, unknown> }).structuredContent;

test('SDK client as an admin: every tool, every resource kind, the templates, every prompt, completions', async () => {
  const client = await connectClient(admin);
  try {
    assert.equal(client.getServerVersion()?.name, 'quarry');
    assert.ok(client.getServerCapabilities()?.tools && client.getServerCapabilities()?.completions);

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['service_search', 'service_doc', 'service_ecosystem_maturity_rollup', 'service_mgmt']);
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.equal(byName.get('service_search')!.annotations?.readOnlyHint, true);
    assert.equal(byName.get('service_mgmt')!.annotations?.destructiveHint, true);
    assert.equal(byName.get('service_mgmt')!._meta?.['dev.quarry/admin'], true);
    assert.equal(byName.get('service_ecosystem_maturity_rollup')!._meta?.['dev.quarry/live'], true);

    // service_search: the REST body, and the same JSON as a text block.
    const search = await client.callTool({ name: 'service_search', arguments: { q: 'granite', page: 1 } });
    const rest = await rawRequest(srv, 'GET', '/api/search?q=granite&page=1', undefined);
    assert.deepEqual(structured(search), rest.json);
    assert.deepEqual(JSON.parse((search.content as { text: string }[])[0]!.text), rest.json);
    assert.equal(structured(search).total, FIXTURE.graniteOwn);

    const first = (structured(search).results as { cid: string }[])[0]!;
    const doc = await client.callTool({ name: 'service_doc', arguments: { cid: first.cid } });
    assert.equal(structured(doc).found, true);
    const missing = await client.callTool({ name: 'service_doc', arguments: { cid: '12345' } });
    assert.equal(missing.isError, true);
    assert.equal(structured(missing).found, false);
    const bad = await client.callTool({ name: 'service_search', arguments: { q: '   ' } });
    assert.equal(bad.isError, true);
    assert.match((bad.content as { text: string }[])[0]!.text, /bad_query/);

    const rollup = await client.callTool({ name: 'service_ecosystem_maturity_rollup', arguments: { domain: 'example.com' } });
    const d = (structured(rollup).domains as { domain: string; documents: { web: number; trusted: number } }[])[0]!;
    assert.deepEqual([d.domain, d.documents.web], ['example.com', 2], 'example.com and docs.example.com, not badexample.com');
    const all = await client.callTool({ name: 'service_ecosystem_maturity_rollup', arguments: {} });
    assert.ok((structured(all).total as number) >= 5);

    const status = await client.callTool({ name: 'service_mgmt', arguments: { action: 'status', target: 'sites' } });
    assert.equal(status.isError, undefined);
    assert.equal((structured(status).targets as { target: string }[])[0]!.target, 'sites');
    const plan = await client.callTool({ name: 'service_mgmt', arguments: { action: 'deploy', target: 'sites', dry_run: true } });
    assert.ok(plan.isError === true || structured(plan).dry_run === true, JSON.stringify(plan));
    const unknown = await client.callTool({ name: 'service_mgmt', arguments: { action: 'status', target: 'no-such-target' } });
    assert.equal(unknown.isError, true);
    assert.match((unknown.content as { text: string }[])[0]!.text, /unknown_target/);
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool/);

    // Resources: every kind listed and read.
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    for (const u of ['quarry://inventory', 'quarry://openapi.json', 'quarry://rpc.contract', 'quarry://maturity/example.com']) assert.ok(uris.includes(u), u);
    const inventory = JSON.parse(((await client.readResource({ uri: 'quarry://inventory' })).contents[0] as { text: string }).text);
    assert.equal(inventory.count, 41);
    const openapi = JSON.parse(((await client.readResource({ uri: 'quarry://openapi.json' })).contents[0] as { text: string }).text);
    assert.match(openapi.openapi, /^3\.1/);
    const docRes = JSON.parse(((await client.readResource({ uri: `doc://own/${first.cid}` })).contents[0] as { text: string }).text);
    assert.deepEqual(docRes, structured(doc));
    const maturity = JSON.parse(((await client.readResource({ uri: 'quarry://maturity/example.com' })).contents[0] as { text: string }).text);
    assert.equal(maturity.domains[0].domain, 'example.com');
    const contract = ((await client.readResource({ uri: 'quarry://rpc.contract' })).contents[0] as { text: string; mimeType: string });
    assert.match(contract.text, /^\/\/ ===== quarry\/v1\/[\s\S]*syntax = "proto3";[\s\S]*service SearchService/);
    const restContract = await rawRequest(srv, 'GET', '/api/rpc.contract?format=proto', undefined);
    assert.equal(contract.text, restContract.text, 'the same sources as GET /api/rpc.contract?format=proto');
    await assert.rejects(client.readResource({ uri: 'doc://own/12345' }), /not found/i);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), ['doc://{scope}/{cid}', 'quarry://maturity/{domain}']);

    // Prompts.
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), ['research', 'deployment']);
    const research = await client.getPrompt({ name: 'research', arguments: { question: 'What is granite?', scope: 'web' } });
    assert.match((research.messages[0]!.content as { text: string }).text, /service_search[\s\S]*service_doc[\s\S]*cid/);
    const deployment = await client.getPrompt({ name: 'deployment', arguments: { target: 'sites' } });
    assert.match((deployment.messages[0]!.content as { text: string }).text, /status[\s\S]*dry_run: true[\s\S]*deploy/);
    await assert.rejects(client.getPrompt({ name: 'research', arguments: {} }), /question/);

    // Completions: prompt arguments (scopes, targets, terms from suggest) and the document template.
    const scope = await client.complete({ ref: { type: 'ref/prompt', name: 'research' }, argument: { name: 'scope', value: 'w' } });
    assert.deepEqual(scope.completion.values, ['web']);
    const terms = await client.complete({ ref: { type: 'ref/prompt', name: 'research' }, argument: { name: 'question', value: 'about elep' } });
    assert.ok(terms.completion.values.includes('about elephant'), JSON.stringify(terms.completion));
    const targets = await client.complete({ ref: { type: 'ref/prompt', name: 'deployment' }, argument: { name: 'target', value: 'si' } });
    assert.ok(targets.completion.values.includes('sites') && targets.completion.values.includes('signaling'), JSON.stringify(targets.completion));
    const docScope = await client.complete({ ref: { type: 'ref/resource', uri: 'doc://{scope}/{cid}' }, argument: { name: 'scope', value: '' } });
    assert.deepEqual(docScope.completion.values, ['own', 'web', 'trusted']);
  } finally {
    await client.close();
  }
});

test('SDK client without a capability: the read-only tools only; service_mgmt refused with 401', async () => {
  const client = await connectClient();
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['service_search', 'service_doc', 'service_ecosystem_maturity_rollup']);
    const r = await client.callTool({ name: 'service_search', arguments: { q: 'elephant' } });
    assert.equal(structured(r).total, FIXTURE.elephantOwn);
    await assert.rejects(client.callTool({ name: 'service_mgmt', arguments: { action: 'status' } }),
      (e: { code?: number; message: string }) => e.code === 401 && /-31001/.test(e.message));
    const { resources } = await client.listResources();
    assert.ok(!resources.some((x) => x.uri === 'quarry://inventory'), 'the inventory is listed only to mgmt.read');
  } finally {
    await client.close();
  }
});
