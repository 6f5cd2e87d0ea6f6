// The verdict rules as a table: each row is a scenario (spec, observation, lock, last operation) and
// the verdict, sync, health and reasons it must give. Pure: no disk, no processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judge } from '../../src/control/index.js';
import type { OpRecord, TargetObservation, TargetSpec, VersionRecord } from '../../src/control/types.js';

const spec = (desired: string | null): TargetSpec => ({ target: 't', desired_version: desired, generation: 1, lock_op: null });
const obs = (o: Partial<TargetObservation>): TargetObservation => ({ target: 't', kind: 'static', liveVersion: undefined, liveDigest: undefined, modified: undefined, ...o });
const op = (kind: OpRecord['kind'], state: OpRecord['state']): OpRecord => ({
  op_id: 'op', target: 't', kind, state, version: null, digest: null, from_version: null, prior_state: null, error: null, log: '', actor: null, reason: null, created_at: '', updated_at: '',
});
const rec = (state: VersionRecord['state']): VersionRecord => ({ target: 't', version: 'v1', digest: 'sha256:00', state, origin: 'build', created_at: '', updated_at: '' });
const proc = (o: Partial<NonNullable<TargetObservation['process']>> = {}) => ({ version: 'v1', pid: 1, port: 1, state: 'running', restarts: 0, healthy: true, ...o });

const rows: [string, Parameters<typeof judge>, string, string, string, string[]][] = [
  ['never deployed', [spec(null), obs({}), undefined, undefined, undefined], 'missing', 'synced', 'missing', ['never_deployed']],
  ['first deploy failed, nothing to return to', [spec(null), obs({}), undefined, op('deploy', 'failed'), undefined], 'failed', 'synced', 'missing', ['last_deploy_failed']],
  ['static, live = desired, intact', [spec('v1'), obs({ liveVersion: 'v1', modified: [], healthFile: true }), undefined, undefined, rec('live')], 'in_sync', 'synced', 'healthy', []],
  ['a file edited', [spec('v1'), obs({ liveVersion: 'v1', modified: ['index.html'], healthFile: true }), undefined, undefined, rec('live')], 'drifted', 'out_of_sync', 'healthy', ['live_files_modified']],
  ['pointer moved', [spec('v2'), obs({ liveVersion: 'v1', modified: [], healthFile: true }), undefined, undefined, rec('live')], 'drifted', 'out_of_sync', 'healthy', ['live_version_mismatch']],
  ['pointer gone', [spec('v1'), obs({}), undefined, undefined, rec('live')], 'missing', 'out_of_sync', 'missing', ['live_pointer_missing']],
  ['live without desired', [spec(null), obs({ liveVersion: 'v1', modified: [] }), undefined, undefined, undefined], 'drifted', 'out_of_sync', 'unknown', ['live_without_desired']],
  ['service healthy', [spec('v1'), obs({ kind: 'service', liveVersion: 'v1', modified: [], process: proc() }), undefined, undefined, rec('live')], 'in_sync', 'synced', 'healthy', []],
  ['service failing its health check', [spec('v1'), obs({ kind: 'service', liveVersion: 'v1', modified: [], process: proc({ healthy: false }) }), undefined, undefined, rec('live')], 'degraded', 'synced', 'degraded', ['health_check_failing']],
  ['service crash-looping', [spec('v1'), obs({ kind: 'service', liveVersion: 'v1', modified: [], process: proc({ state: 'backoff' }) }), undefined, undefined, rec('live')], 'degraded', 'synced', 'degraded', ['process_crashlooping']],
  ['service not running', [spec('v1'), obs({ kind: 'service', liveVersion: 'v1', modified: [] }), undefined, undefined, rec('live')], 'drifted', 'out_of_sync', 'healthy', ['process_missing']],
  ['service running another version', [spec('v1'), obs({ kind: 'service', liveVersion: 'v1', modified: [], process: proc({ version: 'v0' }) }), undefined, undefined, rec('live')], 'drifted', 'out_of_sync', 'healthy', ['process_version_mismatch']],
  ['desired version failed', [spec('v1'), obs({ liveVersion: 'v1', modified: [], healthFile: true }), undefined, undefined, rec('failed')], 'failed', 'synced', 'healthy', ['desired_version_failed']],
  ['deploy in progress', [spec('v1'), obs({ liveVersion: 'v1', modified: [], healthFile: true }), op('deploy', 'running'), op('deploy', 'running'), rec('verifying')], 'progressing', 'synced', 'progressing', ['operation_in_progress:deploy']],
  ['a build holds the lock: what runs is unchanged', [spec('v1'), obs({ liveVersion: 'v1', modified: [], healthFile: true }), op('build', 'running'), op('build', 'running'), rec('live')], 'in_sync', 'synced', 'healthy', []],
  ['recipe broken: health cannot be judged', [spec('v1'), obs({ kind: 'unknown', liveVersion: 'v1', modified: [] }), undefined, undefined, rec('live')], 'unknown', 'synced', 'unknown', ['invalid_recipe']],
  ['auto-rolled-back deploy', [spec('v1'), obs({ liveVersion: 'v1', modified: [], healthFile: true }), undefined, op('deploy', 'failed'), rec('live')], 'in_sync', 'synced', 'healthy', ['last_deploy_failed_rolled_back']],
];

for (const [name, args, verdict, sync, health, reasons] of rows) {
  test(`verdict: ${name} → ${verdict}`, () => {
    assert.deepEqual(judge(...args), { verdict, sync, health, reasons });
  });
}
