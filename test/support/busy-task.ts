/**
 * A worker module for pool tests: it starts the task's deadline as tasks.ts does, then
 * keeps its thread busy for `ms` milliseconds (e.g. far past a deadline), as a map
 * that takes long, or a decoder that loops, would.
 */
export default function busyTask(task: { ms: number; started?: Int32Array }): { ok: true; ms: number } {
  if (task.started) Atomics.store(task.started, 0, 1);
  const until = Date.now() + task.ms;
  while (Date.now() < until) {
    // busy, as a decoder loop is: no await, nothing for the event loop
  }
  return { ok: true, ms: task.ms };
}
