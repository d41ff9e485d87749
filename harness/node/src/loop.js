// The load loop: async workers on Node's one event loop, the schedule, warmup and
// the measured window (the same rules as the Java and Python harnesses).
//
// - Closed loop (rate 0): BENCHGATE_CONCURRENCY async workers, each sending its next
//   request as soon as the previous one completed; latency from the send.
// - Open loop (rate > 0): request i is intended to start at t0 + i / rate (one
//   global sequence); a free worker waits for the next intended start and sends, at
//   most BENCHGATE_CONCURRENCY in flight. Latency runs from the intended start, so
//   queueing behind a stalled server is charged to latency (coordinated omission).
// - Measured: completed inside the window (duration mode; the reference server
//   counts the same way), or the first `requests` sent after it opened
//   (request-count mode).
//   Requests in flight at the deadline are counted apart, in no figure. The window
//   opens once the open marker is printed (a late timer must not count requests
//   the server's window cannot see); a duration window ends `durationMs` later.

import { setTimeout as sleep } from 'node:timers/promises';
import { Result, Tally, classify, errorClassOfStatus } from './result.js';
import { Unsupported } from './workload.js';
import { createInterface } from 'node:readline';

export const OPEN_MARKER = 'BENCHGATE-WINDOW-OPEN';
export const CLOSE_MARKER = 'BENCHGATE-WINDOW-CLOSE';

/**
 * Duration mode: the load goes on this long after the window's end, so the server's
 * window, which closes when benchgate has read the close marker, sees the same
 * steady load at its closing edge as at its opening edge. Requests sent then count
 * nowhere.
 */
export const TAIL_NS = 100_000_000n;

export const now = () => process.hrtime.bigint();

/**
 * Waits until `t` (hrtime ns): a timer for the bulk, then yields to the event loop.
 * Resolves to true, or to false as soon as the promise `woken` (if any) settles.
 */
export async function sleepUntil(t, woken = null) {
  for (;;) {
    const wait = Number(t - now()) / 1e6;
    if (wait <= 0) return true;
    const nap = wait >= 1 ? sleep(Math.floor(wait)) : new Promise(setImmediate);
    if (woken === null) await nap;
    else if (await Promise.race([nap.then(() => false), woken.then(() => true)])) return false;
  }
}

/**
 * Sends one request: resolves to its error class, null for a success. An
 * Unsupported thrown by `send` goes through: the client cannot run the workload.
 */
export async function sendOnce(send) {
  try {
    return errorClassOfStatus(await send());
  } catch (err) {
    if (err instanceof Unsupported) throw err;
    return classify(err);
  }
}

/** Prints a window marker on stdout. */
export function printMarker(line) {
  process.stdout.write(`${line}\n`);
}

/**
 * benchgate acknowledges each window marker with a line on stdin once the reference
 * server's window has opened (or closed), when BENCHGATE_WINDOW_ACK=stdin: waiting for
 * it makes the harness count the span the server counts, however late benchgate reads
 * stdout. Returns an async function that waits for the next acknowledgement, or null
 * when benchgate does not say so (an older version, or a run by hand).
 * @param {Record<string, string | undefined>} [env]
 * @returns {(() => Promise<void>) | null}
 */
export function stdinAck(env = process.env) {
  if (env.BENCHGATE_WINDOW_ACK !== 'stdin') return null;
  const rl = createInterface({ input: process.stdin });
  const lines = rl[Symbol.asyncIterator]();
  let taken = 0;
  return async () => {
    await lines.next();
    taken += 1;
    if (taken === 2) rl.close(); // both came: stdin need not keep the process alive
  };
}

/**
 * Runs the workload and returns the window's figures. `factory(workload)` is called
 * once (one event loop) and returns the async `send() -> status` every worker calls.
 * Throws what the factory threw, or an Unsupported thrown by send.
 * @param {import('./workload.js').Workload} w
 * @param {(w: import('./workload.js').Workload) => (() => Promise<number>) | Promise<() => Promise<number>>} factory
 * @param {(line: string) => void} [marker]
 * @param {(() => Promise<void>) | null} [ack] waits for a marker's acknowledgement
 *   (stdinAck); the workers keep sending meanwhile
 * @returns {Promise<Result>}
 */
export async function measure(w, factory, marker = printMarker, ack = null) {
  const send = await factory(w);
  const t0 = now();
  const warmEnd = t0 + BigInt(w.warmupMs) * 1_000_000n;
  let openedAt = null;
  let end = null; // set when a duration window opens
  let stop = null; // end + TAIL_NS
  let sentAfterWindow = 0;
  let closedAt = null; // when the close marker was printed
  const afterEnd = []; // [start, done, error, latency µs] completed after the scheduled end
  const tally = new Tally();
  const add = (done, error, us) => {
    if (lastEnd === null || done > lastEnd) lastEnd = done;
    tally.add(error, us);
  };
  const nsPerRequest = w.rate > 0 ? 1e9 / w.rate : 0;
  let nextTicket = 0;
  let measuredSent = 0;
  let inFlightAtDeadline = 0;
  let lastEnd = null;

  async function worker() {
    for (;;) {
      let intended;
      let start;
      if (nsPerRequest > 0) {
        intended = t0 + BigInt(Math.round(nextTicket++ * nsPerRequest));
        if (stop !== null && intended >= stop) return;
        await sleepUntil(intended);
        start = now();
        if (stop !== null && start >= stop) return; // behind schedule: nothing after the tail
      } else {
        start = intended = now();
        if (stop !== null && start >= stop) return;
      }
      const sentInWindow = openedAt !== null && start >= openedAt;
      if (sentInWindow && w.durationMs === 0 && ++measuredSent > w.requests) return;
      const error = await sendOnce(send);
      const done = now();
      if (w.durationMs > 0) { // completed in the window, as the server counts
        if (openedAt === null || done < openedAt) continue;
        if (end !== null && done > end) {
          // Past the scheduled end: whether it is in the window depends on when the
          // close marker was printed; decided after the run.
          afterEnd.push([start, done, error, Number((done - intended) / 1000n)]);
          continue;
        }
      } else if (!sentInWindow) {
        continue;
      }
      add(done, error, Number((done - intended) / 1000n));
    }
  }

  const markers = (async () => {
    await sleepUntil(warmEnd);
    marker(OPEN_MARKER);
    if (ack) await ack(); // the server's window is open from here
    openedAt = now();
    if (w.durationMs > 0) {
      end = openedAt + BigInt(w.durationMs) * 1_000_000n;
      stop = end + TAIL_NS;
      await sleepUntil(end);
      marker(CLOSE_MARKER);
      if (ack) await ack(); // the server's window is closed from here
      closedAt = now(); // a late timer widens the window: the server's too
    }
  })();
  const workers = Array.from({ length: w.concurrency }, worker);
  const settled = await Promise.allSettled(workers);
  await markers;
  const stopped = now();
  if (w.durationMs === 0) {
    marker(CLOSE_MARKER);
    if (ack) await ack();
  }
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  for (const [start, done, error, us] of afterEnd) {
    if (done <= closedAt) add(done, error, us);
    else if (start < closedAt) inFlightAtDeadline++;
    else sentAfterWindow++; // the tail
  }
  // Duration: open to close marker. Requests: up to the last measured completion
  // (with none, up to when the workers stopped).
  const elapsedNs = closedAt !== null ? closedAt - openedAt : (lastEnd ?? stopped) - (openedAt ?? warmEnd);
  return new Result({
    latencyUs: tally.latencyUs,
    errors: tally.errors,
    elapsedS: Math.max(Number(elapsedNs), 1) / 1e9,
    inFlightAtDeadline,
    sentAfterWindow,
  });
}
