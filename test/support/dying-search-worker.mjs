// The search worker, whose thread ends when it is given a search for "__exit__" (it exits) or "__throw__"
// (an uncaught error): how the pool test makes a worker die in the middle of a task. Workers run compiled
// modules, so this one is plain JavaScript.
import { parentPort } from 'node:worker_threads';

await import(new URL('../../dist/search/worker.js', import.meta.url).href);
parentPort.on('message', (m) => {
  if (m.task?.q === '__exit__') process.exit(3);
  if (m.task?.q === '__throw__') throw new Error('a bug in a search worker');
});
