/**
 * The scale bench reads its corpus's lines in chunks of its own: every line must come out whole and
 * once, however the chunks cut the file (inside a multi-byte character, inside a line longer than a
 * chunk), with or without a newline at the end, empty lines included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lines } from '../../bench/synth-corpus.js';

test('lines come out whole across chunk boundaries, multi-byte characters and long lines', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-lines-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const chunk = 1 << 22;
  const expected = [
    // ends one byte into a three-byte character at the first chunk's end
    'a'.repeat(chunk - 1) + '€ after',
    '',
    'ünïcödé 𝄞 line',
    // longer than two chunks
    'x'.repeat(2 * chunk + 17),
    'last line without a newline',
  ];
  for (const trailing of ['', '\n']) {
    const file = join(dir, `corpus${trailing.length}.jsonl`);
    writeFileSync(file, expected.join('\n') + trailing);
    // a newline ends the last line; it does not begin an empty one
    const got = [...lines(file)];
    assert.deepEqual(got.map((l) => l.length), expected.map((l) => l.length));
    assert.deepEqual(got, expected);
  }
  const empty = join(dir, 'empty.jsonl');
  writeFileSync(empty, '');
  assert.deepEqual([...lines(empty)], []);
});
