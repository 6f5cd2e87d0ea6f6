import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '../../src/events/bus.js';

test('ids are <epoch>-<seq>, monotonic, and replay returns exactly the events after an id', () => {
  const bus = new EventBus({ epoch: '42' });
  const seen: string[] = [];
  bus.subscribe((e) => seen.push(e.id));
  for (let i = 0; i < 5; i++) bus.publish('index.progress', { done: i });
  assert.deepEqual(seen, ['42-1', '42-2', '42-3', '42-4', '42-5']);
  assert.deepEqual(bus.replaySince('42-2')!.map((e) => e.data.seq), [3, 4, 5]);
  assert.deepEqual(bus.replaySince('42-5'), []);
  assert.equal(bus.replaySince('41-2'), undefined, 'another epoch resets');
  assert.equal(bus.replaySince('42-9'), undefined, 'a future id resets');
  assert.equal(bus.replaySince('garbage'), undefined);
});

test('an id older than the buffer cannot be replayed', () => {
  const bus = new EventBus({ epoch: '1', bufferSize: 10_000 });
  for (let i = 0; i < 10_005; i++) bus.publish('build.log', { line: i });
  assert.equal(bus.replaySince('1-3'), undefined);
  assert.equal(bus.replaySince('1-5')!.length, 10_000);
});

test('a throwing listener does not stop the others', () => {
  const bus = new EventBus();
  let got = 0;
  bus.subscribe(() => { throw new Error('boom'); });
  bus.subscribe(() => { got++; });
  bus.publish('shutdown');
  assert.equal(got, 1);
});

test('a payload that uses an envelope field is a publisher bug, refused before anything is published', () => {
  const bus = new EventBus({ epoch: '7' });
  const seen: unknown[] = [];
  bus.subscribe((e) => seen.push(e));
  for (const key of ['v', 'seq', 'ts', 'kind', 'target']) {
    assert.throws(() => bus.publish('deploy.started', { [key]: 'x' }, 'sites'), (err: unknown) => (err as { code?: string }).code === 'internal');
  }
  assert.equal(seen.length, 0);
  assert.equal(bus.lastSeq, 0, 'no sequence number was spent');
});
