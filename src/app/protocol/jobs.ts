// The page's half of a worker's request/reply protocol, shared by every worker client: each request
// carries a fresh job id, its replies come back with that id and settle its promise (progress replies
// on the way, a failure reply as a rejection). A job can be dropped (its promise rejects, its later
// replies are ignored), and every job fails at once when the worker does.

export interface JobReply {
  type: string;
  job: number;
}

export interface Jobs<R extends JobReply> {
  /** Starts a job under a fresh id (`post` sends its request); resolves with its final reply. */
  start<T extends R>(post: (job: number) => void, onProgress?: (reply: R) => void): { job: number; reply: Promise<T> };
  /** Routes a reply to its job; a reply whose job is no longer waited for is ignored. */
  settle(reply: R): void;
  /** Rejects a job still waiting with `error`; its later replies are ignored. */
  drop(job: number, error: Error): void;
  /** Rejects every job waiting with `error`. */
  failAll(error: Error): void;
}

/** `failure` names the reply type that carries an error `message`; `progress` the ones that do not end a job. */
export function createJobs<R extends JobReply>(failure: R['type'], ...progress: R['type'][]): Jobs<R> {
  let last = 0;
  const waiting = new Map<number, { resolve(reply: R): void; reject(error: Error): void; onProgress?: (reply: R) => void }>();
  return {
    start<T extends R>(post: (job: number) => void, onProgress?: (reply: R) => void) {
      const job = ++last;
      const reply = new Promise<T>((resolve, reject) => {
        waiting.set(job, { resolve: resolve as (reply: R) => void, reject, onProgress });
        post(job);
      });
      return { job, reply };
    },
    settle(reply) {
      const waiter = waiting.get(reply.job);
      if (!waiter) return;
      if (progress.includes(reply.type)) return waiter.onProgress?.(reply);
      waiting.delete(reply.job);
      if (reply.type === failure) waiter.reject(new Error((reply as R & { message: string }).message));
      else waiter.resolve(reply);
    },
    drop(job, error) {
      const waiter = waiting.get(job);
      if (!waiter) return;
      waiting.delete(job);
      waiter.reject(error);
    },
    failAll(error) {
      for (const waiter of waiting.values()) waiter.reject(error);
      waiting.clear();
    },
  };
}
