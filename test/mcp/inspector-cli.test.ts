// The MCP Inspector CLI (@modelcontextprotocol/inspector, `--cli`) against a real `quarry serve` over TLS,
// in both protocol eras (`--protocol-era legacy`: the initialize handshake; `modern`: 2026-07-28): its
// JSON output and exit codes for tools/list, tools/call service_search, resources/read, and a refused
// capability. What the Inspector really returns: 0 for a result, 5 when the tool answers isError, 3 for
// HTTP 401 (no, an invalid or an expired capability) and for HTTP 403 without an OAuth challenge (a valid
// capability without the right — Quarry sends no `insufficient_scope` challenge, which would make the
// Inspector try an OAuth step-up and exit 1 instead).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestServer } from '../support/server.js';
import { rawRequest } from '../support/client.js';
import { mintCap, runNode, startMcpServer, type RunResult } from './support.js';

const INSPECTOR = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url));

let srv: TestServer;
let home: string;
let readOnly: string;
before(async () => {
  srv = await startMcpServer();
  readOnly = mintCap(srv, ['search', 'mgmt.read']);
  home = mkdtempSync(join(tmpdir(), 'quarry-inspector-'));
});
after(async () => {
  await srv?.stop();
  rmSync(home, { recursive: true, force: true });
});

function inspect(era: string, args: string[], cap?: string): Promise<RunResult> {
  return runNode(srv, [
    INSPECTOR, '--cli', `${srv.url}/mcp`, '--transport', 'http', '--protocol-era', era, '--stored-auth-only',
    '--format', 'json', '-q', ...(cap ? ['--header', `Authorization: Bearer ${cap}`] : []), ...args,
  ], { timeoutMs: 120_000, env: { HOME: home, MCP_CATALOG_PATH: join(home, 'catalog.json'), MCP_CLIENT_CONFIG_PATH: join(home, 'client.json') } });
}

/** The result (stdout) or, on failure, the error envelope (stderr), as JSON. */
function json(r: RunResult): Record<string, unknown> {
  try {
    return JSON.parse(r.code === 0 || r.stdout.trim() !== '' ? r.stdout : r.stderr) as Record<string, unknown>;
  } catch {
    throw new Error(`the Inspector printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

for (const era of ['legacy', 'modern']) {
  test(`Inspector CLI, ${era} era: tools/list, tools/call service_search, resources/read`, { timeout: 300_000 }, async () => {
    const list = await inspect(era, ['--method', 'tools/list']);
    assert.equal(list.code, 0, list.stderr);
    const tools = (json(list).result as { tools: { name: string }[] }).tools.map((t) => t.name);
    assert.deepEqual(tools, ['service_search', 'service_doc', 'service_ecosystem_maturity_rollup'], 'anonymous: the read-only tools');
    const admin = await inspect(era, ['--method', 'tools/list'], readOnly);
    assert.ok((json(admin).result as { tools: { name: string }[] }).tools.some((t) => t.name === 'service_mgmt'), 'listed to a mgmt.* capability');

    const call = await inspect(era, ['--method', 'tools/call', '--tool-name', 'service_search', '--tool-args-json', '{"q":"granite","scope":"web"}']);
    assert.equal(call.code, 0, call.stderr);
    const rest = await rawRequest(srv, 'GET', '/api/search?q=granite&scope=web', undefined);
    assert.deepEqual((json(call).result as { structuredContent: unknown }).structuredContent, rest.json);

    const failed = await inspect(era, ['--method', 'tools/call', '--tool-name', 'service_search', '--tool-args-json', '{"q":"  "}']);
    assert.equal(failed.code, 5, 'a tool result with isError');

    const openapi = await inspect(era, ['--method', 'resources/read', '--uri', 'quarry://openapi.json']);
    assert.equal(openapi.code, 0, openapi.stderr);
    const contents = (json(openapi).result as { contents: { uri: string; mimeType: string; text: string }[] }).contents;
    assert.equal(contents[0]!.mimeType, 'application/json');
    assert.match(JSON.parse(contents[0]!.text).openapi, /^3\.1/);
    const cid = ((rest.json as { results: { cid: string }[] }).results[0]!).cid;
    const doc = await inspect(era, ['--method', 'resources/read', '--uri', `doc://web/${cid}`]);
    assert.equal(doc.code, 0, doc.stderr);
    assert.equal(JSON.parse((json(doc).result as { contents: { text: string }[] }).contents[0]!.text).cid, cid);
  });

  test(`Inspector CLI, ${era} era: a refused capability exits 3`, { timeout: 300_000 }, async () => {
    const invalid = await inspect(era, ['--method', 'tools/list'], 'not-a-capability');
    assert.equal(invalid.code, 3, invalid.stdout + invalid.stderr);
    assert.equal((json(invalid).error as { code: string }).code, 'auth_required');
    const denied = await inspect(era, ['--method', 'tools/call', '--tool-name', 'service_mgmt', '--tool-args-json', '{"action":"deploy","target":"sites","dry_run":true}'], readOnly);
    assert.equal(denied.code, 3, denied.stdout + denied.stderr);
    assert.equal((json(denied).error as { status?: number }).status, 403);
    assert.ok(!denied.stdout.includes(readOnly) && !denied.stderr.includes(readOnly), 'the capability is never echoed');
  });
}
