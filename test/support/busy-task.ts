/**
 * A worker module for pool tests: it flags its task as started and finished as tasks.ts
 * does, and in between keeps its thread busy for `ms` milliseconds, as a map that takes
 * long, or a decoder that loops, would.
 */
import { TASK_FINISHED, TASK_RUNNING } from '../../src/workers/deadlines.js';

export default function busyTask(task: { ms: number; started?: Int32Array }): { ok: true; ms: number } {
  if (task.started) Atomics.store(task.started, 0, TASK_RUNNING);
  const until = Date.now() + task.ms;
  while (Date.now() < until) {
    // busy, as a decoder loop is: no await, nothing for the event loop
  }
  if (task.started) Atomics.store(task.started, 0, TASK_FINISHED);
  return { ok: true, ms: task.ms };
}
