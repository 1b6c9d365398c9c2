/**
 * The Piscina pool that runs tasks.ts. A bounded queue: when it is full the caller
 * gets PoolBusyError at once instead of waiting without bound. Each worker runs under
 * the memory budget's V8 limits; a task that outgrows them ends its worker only (Piscina
 * starts another) and comes back as a `too_large` refusal. A task also has a deadline,
 * counted from when its worker starts it (time in the queue is not the map's fault):
 * past it the worker is ended the same way, so a map that would keep a worker busy
 * for ever (a decoder bug, a pathological file) costs one refusal, not a worker.
 */
import type { ResourceLimits } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { createSemaphore } from '../concurrency/index.js';
import { createDeadlines } from './deadlines.js';
import type { AnalyzeResult, AnalyzeTask, BuildResult, BuildTask, ConvertResult, ConvertTask, Refusal, SceneResult, SceneTask, TaskLimits } from './tasks.js';

/** The queue is full: the HTTP layer answers 503 with Retry-After. */
export class PoolBusyError extends Error {
  override name = 'PoolBusyError';
  constructor() {
    super('all workers are busy and the queue is full');
  }
}

export interface WorkerPoolOptions {
  workers: number;
  maxQueue: number;
  /** The budget's per-task limits, added to every task. */
  limits: TaskLimits;
  /** The budget's V8 limits for each worker. */
  resourceLimits?: ResourceLimits;
  /** How long a task may run once its worker has started it (TASK_TIMEOUT_MS). */
  taskTimeoutMs: number;
  /** The worker module (tasks.js unless a test runs its own). */
  filename?: URL;
}

export interface WorkerPool {
  analyze(task: Omit<AnalyzeTask, 'kind' | 'limits'>): Promise<AnalyzeResult>;
  build(task: Omit<BuildTask, 'kind' | 'limits'>): Promise<BuildResult>;
  /** Converts downloaded meshes and union models into the converted store. */
  convert(task: Omit<ConvertTask, 'kind' | 'limits'>): Promise<ConvertResult | Refusal>;
  /** Builds a project's scene.glb. */
  scene(task: Omit<SceneTask, 'kind' | 'limits'>): Promise<SceneResult>;
  stats(): { workers: number; running: number; queued: number; max_queue: number; replaced: number; timed_out: number; tasks: { analyze: number; build: number; convert: number; scene: number } };
  close(): Promise<void>;
}

export function createWorkerPool({ workers, maxQueue, limits, resourceLimits, taskTimeoutMs, filename }: WorkerPoolOptions): WorkerPool {
  const piscina = new Piscina({
    filename: (filename ?? new URL('./tasks.js', import.meta.url)).href,
    minThreads: workers,
    maxThreads: workers,
    // No piscina maxQueue: admission below bounds tasks in flight, which also bounds the queue.
    resourceLimits: resourceLimits ?? { maxYoungGenerationSizeMb: 64 },
    // Piscina first tries require() on the task file. Node 20's require() of an ES module
    // whose graph has top-level await (the wasm decoders load that way) can abort the
    // process (a V8 check on IsGraphAsync); refusing require(esm) in the workers makes
    // piscina take its import() path at once.
    execArgv: ['--no-experimental-require-module'],
  });
  // Running plus waiting: a worker each, then up to maxQueue in line.
  const admission = createSemaphore(workers + maxQueue);
  let replaced = 0;
  let timedOut = 0;
  /** Tasks handed to a worker, by kind (the analysis dedupe is checked against these). */
  const tasks = { analyze: 0, build: 0, convert: 0, scene: 0 };
  const deadlines = createDeadlines(taskTimeoutMs);
  const overTime: Refusal = {
    ok: false,
    reason: 'too_large',
    message: `the map took more than ${formatSeconds(taskTimeoutMs)} to process here (TASK_TIMEOUT_MS)`,
  };

  async function run<T>(task: AnalyzeTask | BuildTask | ConvertTask | SceneTask): Promise<T | Refusal> {
    const release = admission.tryAcquire();
    if (release === null) throw new PoolBusyError();
    tasks[task.kind]++;
    const deadline = deadlines.add();
    try {
      return (await piscina.run({ ...task, started: deadline.started }, { signal: deadline.signal })) as T;
    } catch (error) {
      if (deadline.signal.aborted) {
        timedOut++;
        return overTime;
      }
      if ((error as NodeJS.ErrnoException)?.code !== 'ERR_WORKER_OUT_OF_MEMORY') throw error;
      replaced++;
      return OUT_OF_MEMORY;
    } finally {
      deadline.done();
      release();
    }
  }

  return {
    analyze: (task) => run<AnalyzeResult>({ kind: 'analyze', limits, ...task }),
    build: (task) => run<BuildResult>({ kind: 'build', limits, ...task }),
    convert: (task) => run<ConvertResult>({ kind: 'convert', limits, ...task }),
    scene: (task) => run<SceneResult>({ kind: 'scene', limits, ...task }),
    stats: () => ({
      workers: piscina.threads.length, running: Math.min(admission.active, workers), queued: piscina.queueSize, max_queue: maxQueue, replaced, timed_out: timedOut, tasks: { ...tasks },
    }),
    close: () => {
      deadlines.close();
      return piscina.destroy();
    },
  };
}

const OUT_OF_MEMORY: Refusal = {
  ok: false as const,
  reason: 'too_large' as const,
  message: 'the map needs more memory than one task may use here (MAX_MEMORY_MB / WORKERS)',
};

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
