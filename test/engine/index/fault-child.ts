/**
 * Child of fault-points.test.ts: one commit of 50 replacement docs, dying at the fault point named in
 * QUARRY_INDEX_FAULT. With `threads` as its second argument, the commit is a bulk load of tiny buffers: batches
 * of a few documents are built into segments by threads and full buffers are written in threads, where the
 * first `file-written` point is met.
 */
import { Index } from '../../../src/engine/index/index.js';

const threads = process.argv[3] === 'threads' ? { maxBufferedBytes: 2048, threadBytes: 0 } : {};
const index = await Index.open(process.argv[2]!, { mergeFactor: 2, mergeFloorBytes: 1 << 20, ...threads });
const w = await index.openWriter();
for (let i = 0; i < 50; i++) w.upsert({ cid: BigInt(i), title: 'new', text: `replacement ${i}` });
w.delete(60n);
await w.commit();
process.stdout.write('committed\n');
await index.close();
