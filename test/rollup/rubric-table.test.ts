// The maturity rubric (docs/maturity.md, `quarry-maturity/1`) as a table: each row is a domain's figures
// and the grade they earn, with the points written out so a changed threshold shows which row moved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grade, type DomainRollup } from '../../src/rollup/service.js';

const DAY = 86_400;
type Row = [docs: number, flags: number, freshnessS: number | null, errorRate: number | null, duplicateRate: number | null, expected: DomainRollup['grade'], why: string];

const ROWS: Row[] = [
  [0, 0, null, null, null, 'F', '0 points: nothing known, nothing indexed'],
  [9, 0, null, null, null, 'F', '0: under 10 documents'],
  [10, 0, null, null, null, 'E', '1: 10 documents'],
  [99, 0, null, null, null, 'E', '1: still under 100'],
  [100, 0, null, null, null, 'D', '2: 100 documents'],
  [1000, 0, null, null, null, 'C', '3: 1,000 documents'],
  [1000, 1, null, null, null, 'B', '4: one trusted flag adds a point'],
  [1000, 5, null, null, null, 'B', '4: flags count once'],
  [1000, 1, 7 * DAY, null, null, 'A', '5: fetched within 7 days'],
  [1000, 1, 7 * DAY + 1, null, null, 'B', '4: 7 days and a second is neither fresh nor stale'],
  [1000, 1, 90 * DAY, null, null, 'B', '4: 90 days is not yet stale'],
  [1000, 1, 90 * DAY + 1, null, null, 'C', '3: stale past 90 days'],
  [100, 0, 0, 0.05, null, 'B', '4: 2 + fresh + errors ≤ 5%'],
  [100, 0, 0, 0.0501, null, 'C', '3: errors just over 5% earn nothing'],
  [100, 0, 0, 0.25, null, 'C', '3: 25% errors is not yet penalized'],
  [100, 0, 0, 0.2501, null, 'D', '2: over 25% errors loses a point'],
  [100, 0, 0, 0, 0.5, 'B', '4: half duplicates is not penalized'],
  [100, 0, 0, 0, 0.5001, 'C', '3: over half duplicates loses a point'],
  [5, 0, 100 * DAY, 0.9, 0.9, 'F', '−3 points floor at F'],
  [1000, 2, 0, 0, 0, 'A', '6 points: the best case'],
];

test('the rubric, row by row', () => {
  for (const [docs, flags, freshness, errors, dups, expected, why] of ROWS) {
    const got = grade({
      domain: 'example.com', documents: { own: 0, web: docs, trusted: 0, total: docs }, trusted_flags: flags,
      last_fetch_at: freshness === null ? null : new Date(0).toISOString(), freshness_s: freshness,
      fetch_error_rate: errors, duplicate_rate: dups,
    });
    assert.equal(got, expected, why);
  }
});
