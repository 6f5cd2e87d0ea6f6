/**
 * Bounded concurrency for asynchronous work over a list: at most `limit` calls of `fn` in flight. The
 * control plane uses it so that work over many items (targets, files of a release) advances several
 * items per turn of the event loop without flooding the thread pool.
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
