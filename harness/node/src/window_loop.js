// The window loop (docs/external-clients.md, "The window loop"): one process
// measures many windows after one warmup.
//
// The workers send from the start to the exit; benchgate opens and closes window k
// on stdin, and the harness answers each close with the window's result record on
// one stdout line. A request counts in window k when it completes between the
// reading of `BENCHGATE-WINDOW-OPEN k` and of `BENCHGATE-WINDOW-CLOSE k`, as the
// reference server counts its own window: one event loop orders the completions
// and the commands, so a completion handled after the close counts nowhere. Open
// loop: requests are scheduled at the rate from the start, and again from each
// resume; latency from the intended start.

import { createInterface } from 'node:readline';
import { now, printMarker, sendOnce, sleepUntil } from './loop.js';
import { Result, Tally } from './result.js';

export const DECLARE = 'BENCHGATE-WINDOWS-LOOP';
export const READY = 'BENCHGATE-READY';
export const OPEN = 'BENCHGATE-WINDOW-OPEN ';
export const CLOSE = 'BENCHGATE-WINDOW-CLOSE ';
export const RESULT = 'BENCHGATE-WINDOW-RESULT ';
export const PAUSE = 'BENCHGATE-PAUSE';
export const PAUSED = 'BENCHGATE-PAUSED';
export const RESUME = 'BENCHGATE-RESUME';
export const EXIT = 'BENCHGATE-EXIT';

/**
 * Whether benchgate offers the loop and this workload can take it (a duration,
 * acknowledgements on stdin).
 * @param {import('./workload.js').Workload} w
 * @param {Record<string, string | undefined>} env
 */
export function offered(w, env) {
  return env.BENCHGATE_WINDOWS === 'loop' && env.BENCHGATE_WINDOW_ACK === 'stdin' && w.durationMs > 0;
}

/** A promise and its resolve function. */
function signal() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

/** The number after `word` in `cmd`, -1 when there is none. */
function number(cmd, word) {
  const text = cmd.slice(word.length).trim();
  return /^\d+$/.test(text) ? Number(text) : -1;
}

class Loop {
  constructor(w, send, say) {
    this.w = w;
    this.send = send;
    this.say = say;
    this.nsPerRequest = w.rate > 0 ? 1e9 / w.rate : 0;
    /** The open window: {k, openedAt, tally}, or null. */
    this.current = null;
    this.paused = false;
    this.stopping = false;
    this.epoch = 0;
    this.scheduleStart = now();
    this.nextTicket = 0;
    this.inFlight = 0;
    /** Settles at the next pause, resume or stop: sleeping workers wake to it. */
    this.changed = signal();
    /** Settles when the last request in flight completes, while paused. */
    this.drained = null;
  }

  /** Wakes the sleeping workers: the pause state has changed. */
  wake() {
    this.changed.resolve();
    this.changed = signal();
  }

  /** One worker: sends until stopped, waiting while paused; counts into the open window. */
  async work(slot) {
    try {
      for (;;) {
        if (this.stopping) return;
        if (this.paused) {
          await this.changed.promise;
          continue;
        }
        let intended;
        if (this.nsPerRequest > 0) {
          const epoch = this.epoch;
          intended = this.scheduleStart + BigInt(Math.round(this.nextTicket++ * this.nsPerRequest));
          const on = await sleepUntil(intended, this.changed.promise);
          if (!on || this.paused || this.stopping || this.epoch !== epoch) continue; // that ticket lapses
        } else {
          intended = now();
        }
        this.inFlight++;
        let error;
        try {
          error = await sendOnce(this.send);
        } finally {
          this.inFlight--;
          if (this.inFlight === 0 && this.drained) this.drained.resolve();
        }
        const done = now();
        const win = this.current;
        if (win !== null && done >= win.openedAt) win.tally.add(error, Number((done - intended) / 1000n));
      }
    } catch (err) {
      this.say(`worker ${slot} stopped: ${err?.stack ?? err}`);
    }
  }

  /** Stops new requests; resolves once every request in flight completed. */
  async pause() {
    this.paused = true;
    this.wake();
    if (this.inFlight > 0) {
      this.drained = signal();
      await this.drained.promise;
      this.drained = null;
    }
  }

  /** Lets paused workers go again; an open loop's schedule starts over from now. */
  resume() {
    if (!this.paused) return;
    this.paused = false;
    this.epoch++;
    this.nextTicket = 0;
    this.scheduleStart = now();
    this.wake();
  }

  stop() {
    this.stopping = true;
    this.wake();
  }

  /** Carries out the commands of `lines` until EXIT or their end; `out` prints a line. */
  async obey(lines, out) {
    for await (const line of lines) {
      const t = now();
      const cmd = line.trim();
      if (cmd === EXIT) return;
      if (cmd.startsWith(OPEN)) {
        this.resume();
        this.current = { k: number(cmd, OPEN), openedAt: t, tally: new Tally() };
      } else if (cmd.startsWith(CLOSE)) {
        const k = number(cmd, CLOSE);
        const win = this.current;
        if (win === null || win.k !== k) {
          this.say(`${cmd} but the open window is ${win ? win.k : 'none'}; ignored`);
          continue;
        }
        this.current = null;
        const result = new Result({
          latencyUs: win.tally.latencyUs,
          errors: win.tally.errors,
          elapsedS: Math.max(Number(t - win.openedAt), 1) / 1e9,
          inFlightAtDeadline: 0,
        });
        out(RESULT + JSON.stringify({ ...result.document(), window: k }));
      } else if (cmd === PAUSE) {
        await this.pause();
        out(PAUSED);
      } else if (cmd === RESUME) {
        this.resume();
      } else {
        this.say(`unknown command from benchgate: ${cmd}; ignored`);
      }
    }
  }
}

/**
 * stdin's lines, from now on: readline drops the lines it reads before its
 * iterator exists, so it is made at once.
 */
function stdinLines() {
  return createInterface({ input: process.stdin })[Symbol.asyncIterator]();
}

/**
 * Runs the loop: builds the client (`factory` once), declares the loop, warms up,
 * says ready, then obeys the commands of `lines` (an async iterable of lines;
 * default: stdin) until `BENCHGATE-EXIT` or their end. Throws what the factory
 * threw (Unsupported included), before the loop is declared.
 * @param {import('./workload.js').Workload} w
 * @param {Function} factory
 * @param {{lines?: AsyncIterable<string>, out?: (line: string) => void, say?: (msg: string) => void}} [io]
 */
export async function runLoop(w, factory, { lines, out = printMarker, say = () => {} } = {}) {
  const send = await factory(w);
  const commands = lines ?? stdinLines();
  out(DECLARE);
  const loop = new Loop(w, send, say);
  const t0 = loop.scheduleStart;
  const workers = Array.from({ length: w.concurrency }, (_, i) => loop.work(i));
  await sleepUntil(t0 + BigInt(w.warmupMs) * 1_000_000n);
  out(READY);
  await loop.obey(commands, out);
  loop.stop();
  // A request in flight ends by its timeout.
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(resolve, w.timeoutMs + 1000); });
  await Promise.race([Promise.all(workers), late]);
  clearTimeout(timer);
}
