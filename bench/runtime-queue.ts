// Work queue throughput: how many keys per second flow through add -> get -> done with a number
// of workers doing no work, how cheap de-duplicated adds are, and how delayed adds scale.
// Run: npx tsx bench/runtime-queue.ts
import { WorkQueue } from "../src/runtime/queue.js";

/** Runs `workers` workers that do nothing until `expected` keys were processed. */
async function drain(q: WorkQueue, workers: number, expected: number): Promise<number> {
  let processed = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (;;) {
        const key = await q.get();
        if (key === undefined) return;
        q.done(key);
        if (++processed === expected) q.shutdown();
      }
    }),
  );
  return processed;
}

function rate(n: number, ms: number): string {
  return `${Math.round((n / ms) * 1000).toLocaleString("en-US")}/s`;
}

async function distinctKeys(n: number, workers: number): Promise<void> {
  const q = new WorkQueue();
  const start = performance.now();
  for (let i = 0; i < n; i++) q.add(`ns/key-${i}`);
  const added = performance.now();
  const processed = await drain(q, workers, n);
  const end = performance.now();
  console.log(
    `distinct keys ${n}, workers ${workers}: add ${rate(n, added - start)}, get+done ${rate(processed, end - added)} (processed ${processed})`,
  );
}

async function duplicateAdds(adds: number, keys: number): Promise<void> {
  const q = new WorkQueue();
  const start = performance.now();
  for (let i = 0; i < adds; i++) q.add(`ns/key-${i % keys}`);
  const end = performance.now();
  console.log(
    `duplicate adds ${adds} over ${keys} keys: ${rate(adds, end - start)}, queue length ${q.length}`,
  );
  q.shutdown();
}

async function delayedAdds(n: number): Promise<void> {
  const q = new WorkQueue();
  const start = performance.now();
  for (let i = 0; i < n; i++) q.addAfter(`ns/key-${i}`, 50 + (i % 50));
  const scheduled = performance.now();
  while (q.length < n) await new Promise((r) => setTimeout(r, 5));
  const ready = performance.now();
  console.log(
    `delayed adds ${n}: schedule ${rate(n, scheduled - start)}, all ready ${Math.round(ready - start)} ms after the first (delays 50-99 ms)`,
  );
  q.shutdown();
}

async function failingKeys(n: number): Promise<void> {
  const q = new WorkQueue();
  const start = performance.now();
  for (let i = 0; i < n; i++) q.addRateLimited(`ns/key-${i}`);
  const end = performance.now();
  console.log(`rate-limited adds ${n} (token bucket 10/s, burst 100): ${rate(n, end - start)}`);
  q.shutdown();
}

console.log(`node ${process.version}`);
for (const workers of [1, 4, 16]) await distinctKeys(100_000, workers);
await duplicateAdds(1_000_000, 1_000);
await delayedAdds(50_000);
await failingKeys(100_000);
