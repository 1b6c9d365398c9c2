/**
 * The Piscina pool that runs tasks.ts. A bounded queue: when it is full the caller
 * gets `busy` (503 + Retry-After) at once instead of waiting without bound.
 */
import { Piscina } from 'piscina';
import type { AnalyzeResult, AnalyzeTask, BuildResult, BuildTask } from './tasks.js';

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
}

export interface WorkerPool {
  analyze(task: Omit<AnalyzeTask, 'kind'>): Promise<AnalyzeResult>;
  build(task: Omit<BuildTask, 'kind'>): Promise<BuildResult>;
  stats(): { workers: number; running: number; queued: number; max_queue: number };
  close(): Promise<void>;
}

export function createWorkerPool({ workers, maxQueue }: WorkerPoolOptions): WorkerPool {
  const piscina = new Piscina({
    filename: new URL('./tasks.js', import.meta.url).href,
    minThreads: workers,
    maxThreads: workers,
    // No piscina maxQueue: `run` admits by tasks in flight, which also bounds the queue.
    // Decoding a large place needs room; the default young generation makes it GC-bound.
    resourceLimits: { maxYoungGenerationSizeMb: 64 },
  });
  let running = 0;

  async function run<T>(task: AnalyzeTask | BuildTask): Promise<T> {
    // Running plus waiting: a worker each, then up to maxQueue in line. (Comparing the
    // queue alone with maxQueue refused every task when maxQueue was 0, idle or not.)
    if (running >= workers + maxQueue) throw new PoolBusyError();
    running++;
    try {
      return (await piscina.run(task)) as T;
    } finally {
      running--;
    }
  }

  return {
    analyze: (task) => run<AnalyzeResult>({ kind: 'analyze', ...task }),
    build: (task) => run<BuildResult>({ kind: 'build', ...task }),
    stats: () => ({ workers: piscina.threads.length, running: Math.min(running, workers), queued: piscina.queueSize, max_queue: maxQueue }),
    close: () => piscina.destroy(),
  };
}
