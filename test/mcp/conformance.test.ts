// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned to the release that
// carries the 2026-07-28 requirements) against a real `quarry serve` over TLS, once per protocol era:
// `--requirements 2026-07-28` (stateless) and `--requirements 2025-11-25` (handshake). The suite's own
// fixture tools, resources and prompts are served by the test-only catalog (QUARRY_MCP_TEST_FIXTURES=1).
// Every scenario the revision requires must pass: the CLI's exit code and every required scenario's
// checks.json are asserted (scenarios the suite runs but never scores — extensions, pending — are not).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestServer } from '../support/server.js';
import { runNode, startMcpServer } from './support.js';

const CLI = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url));
const SHIM = fileURLToPath(new URL('./node20-fs-glob.mjs', import.meta.url));

let srv: TestServer;
before(async () => { srv = await startMcpServer({ fixtures: true }); });
after(async () => { await srv?.stop(); });

/** Scenario names the CLI lists as required for a revision (the lines under "Server scenarios"). */
async function requiredScenarios(revision: string): Promise<string[]> {
  const r = await runNode(srv, ['--import', SHIM, CLI, 'list', '--requirements', revision]);
  assert.equal(r.code, 0, r.stderr);
  const server = r.stdout.split(/Server scenarios[^\n]*\n/)[1]!.split(/\n\s*\n/)[0]!;
  return [...server.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
}

for (const revision of ['2026-07-28', '2025-11-25']) {
  test(`conformance suite, requirements ${revision}: every required scenario passes`, { timeout: 600_000 }, async () => {
    const required = await requiredScenarios(revision);
    assert.ok(required.length >= 25, `the suite lists the required scenarios of ${revision}: ${required.join(', ')}`);
    const out = mkdtempSync(join(tmpdir(), 'quarry-conformance-'));
    try {
      const r = await runNode(srv, ['--import', SHIM, CLI, 'server', '--url', `${srv.url}/mcp`, '--requirements', revision, '-o', out]);
      assert.equal(r.code, 0, `conformance ${revision} exited ${r.code}:\n${r.stdout.slice(-4000)}\n${r.stderr.slice(-2000)}`);
      const dirs = readdirSync(out);
      const failures: string[] = [];
      for (const scenario of required) {
        const dir = dirs.find((d) => d.startsWith(`server-${scenario}-`) && /-\d{4}-\d{2}-\d{2}T/.test(d.slice(`server-${scenario}`.length)));
        assert.ok(dir, `scenario ${scenario} left results`);
        const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as { id: string; status: string; errorMessage?: string }[];
        assert.ok(checks.length > 0, `scenario ${scenario} ran checks`);
        for (const c of checks) if (c.status === 'FAILURE') failures.push(`${scenario}/${c.id}: ${c.errorMessage ?? ''}`);
      }
      assert.deepEqual(failures, []);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
}
