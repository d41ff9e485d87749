// benchgate-harness: write one function that sends one HTTP request; this package
// turns it into a benchgate external client (docs/external-clients.md).
//
//   import { run } from 'benchgate-harness';
//   await run(async (w) => { const r = await fetch(w.url); await r.arrayBuffer(); return r.status; });
//
// It reads the BENCHGATE_* variables, runs the closed or open loop as async workers,
// excludes the warmup, prints the window markers, records latency (µs) in an
// HdrHistogram, writes the result file and exits 0, 1, 2 or 3; or, when benchgate
// offers the window loop (BENCHGATE_WINDOWS=loop), measures every window benchgate
// asks for in one process after one warmup (window_loop.js).

import { readFileSync } from 'node:fs';
import { measure, printMarker, stdinAck } from './loop.js';
import { writeResult } from './result.js';
import { offered, runLoop } from './window_loop.js';
import { BadWorkload, Unsupported, workloadFromEnv } from './workload.js';

export { CLOSE_MARKER, OPEN_MARKER, measure } from './loop.js';
export { ERROR_CLASSES, RequestFailed, Result, classify, writeResult } from './result.js';
export { BadWorkload, METHODS, Unsupported, workloadFromEnv } from './workload.js';

/** The package's version, from its package.json. */
export const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
/** Exit code: done. */
export const EXIT_OK = 0;
/** Exit code: not one measured request got an HTTP response, or the client failed. */
export const EXIT_NO_RESPONSE = 1;
/** Exit code: a BENCHGATE_* variable is missing or invalid. */
export const EXIT_BAD_WORKLOAD = 2;
/** Exit code: the client does not support this workload (Unsupported). */
export const EXIT_UNSUPPORTED = 3;

/**
 * `run` without the exit: measures, writes the result file, logs; resolves to the exit code.
 * Pass `send(workload) -> Promise<status>` (one function, reads the whole body), or
 * `{ factory }` where `factory(workload)` builds the client once and returns `send() -> Promise<status>`.
 * @param {Function | {factory: Function}} what
 * @param {{name?: string, env?: Record<string, string|undefined>}} [options]
 * @returns {Promise<number>}
 */
export async function main(what, { name = process.argv[1]?.split('/').pop() ?? 'benchgate-harness', env } = {}) {
  let factory;
  if (typeof what === 'function') factory = (w) => () => what(w);
  else if (what && typeof what.factory === 'function') factory = what.factory;
  else throw new TypeError('run(send) or run({ factory }): pass a function');
  const say = (msg) => process.stderr.write(`${name}: ${msg}\n`);
  let w;
  try {
    w = workloadFromEnv(env);
  } catch (err) {
    if (!(err instanceof BadWorkload)) throw err;
    say(err.message);
    return EXIT_BAD_WORKLOAD;
  }
  /** The exit code of a measurement that threw `err`, said on stderr. */
  const failed = (err) => {
    if (err instanceof Unsupported) {
      say(`unsupported workload: ${err.message}`);
      return EXIT_UNSUPPORTED;
    }
    say(`the client failed: ${err?.stack ?? err}`);
    return EXIT_NO_RESPONSE;
  };
  if (offered(w, env ?? process.env)) {
    try {
      await runLoop(w, factory, { say }); // every window's record on stdout, no result file
    } catch (err) {
      return failed(err);
    }
    return EXIT_OK;
  }
  let result;
  try {
    result = await measure(w, factory, printMarker, stdinAck(env));
  } catch (err) {
    return failed(err);
  }
  if (w.resultPath) {
    try {
      writeResult(w.resultPath, result);
    } catch (err) {
      say(`cannot write the result file ${w.resultPath}: ${err.message}`);
      return EXIT_NO_RESPONSE;
    }
  }
  process.stdout.write(`${result.hdrLine()}\n`);
  say(result.summary());
  if (result.answered === 0) {
    say(`not a single measured request got an HTTP response; is the server at ${w.url} up?`);
    return EXIT_NO_RESPONSE;
  }
  return EXIT_OK;
}

/**
 * Runs one benchgate trial and exits the process with its exit code (after stdout
 * and stderr have drained). Same arguments as `main`.
 */
export async function run(what, options) {
  const code = await main(what, options);
  process.exitCode = code;
  // Keep-alive sockets would hold the event loop open: exit once the output is out.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}
