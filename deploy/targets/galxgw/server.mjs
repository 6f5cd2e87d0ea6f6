// A tiny HTTP service run by the Quarry control plane's supervisor: `PORT` (and `HOST`, default
// 127.0.0.1) come from the environment, GET /healthz is the health check of recipe.json, GET / says who
// and which configuration is live. `"healthy": false` in config.json makes /healthz answer 503, which is
// how the control plane's automatic rollback is exercised. SIGTERM closes the listener and exits 0.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const config = JSON.parse(readFileSync(new URL('./config.json', import.meta.url), 'utf8'));
const server = createServer((req, res) => {
  const healthy = config.healthy !== false;
  if (req.url === '/healthz') {
    res.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: healthy ? 'ok' : 'unhealthy', name: config.name }));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ name: config.name, message: config.message ?? '' }));
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  console.log(`${config.name} listening on ${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
