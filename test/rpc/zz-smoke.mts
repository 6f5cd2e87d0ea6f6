import { startServer } from '../support/server.js';
import { writeFixtureCorpus } from '../support/fixture-corpus.js';
import { writeFileSync } from 'node:fs';
const srv = await startServer({ setup: writeFixtureCorpus });
writeFileSync('/tmp/rpc-smoke.json', JSON.stringify({ url: srv.url, ca: srv.certFile, pid: srv.pid }));
console.log(srv.url);
await new Promise((r) => setTimeout(r, 900_000));
await srv.stop();
