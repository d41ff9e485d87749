// What a trial measured, the error classes, and the result file benchgate reads
// (docs/external-clients.md, "The result file").

import { renameSync, writeFileSync } from 'node:fs';
import { Histogram, HIGHEST_US } from './histogram.js';

export { HIGHEST_US };

/** benchgate's error classes, in the order the result file lists them. */
export const ERROR_CLASSES = ['connect', 'timeout', 'read', 'write', 'status_4xx', 'status_5xx'];

/** An empty latency histogram (µs) with the precision every harness uses. */
export function newHistogram() {
  return new Histogram();
}

/** Completed requests: the successes' latency (µs) in a histogram, the failures per class. */
export class Tally {
  latencyUs = newHistogram();
  errors = Object.fromEntries(ERROR_CLASSES.map((c) => [c, 0]));

  /** Counts one completion: `error` its class, null for a success taking `us` µs. */
  add(error, us) {
    if (error === null) this.latencyUs.recordValue(Math.min(Math.max(us, 0), HIGHEST_US));
    else this.errors[error]++;
  }
}

/** Throw from a send function to say which error class a failed request is in. */
export class RequestFailed extends Error {
  name = 'RequestFailed';
  /**
   * @param {string} errorClass one of ERROR_CLASSES
   * @param {unknown} [cause] the original failure
   */
  constructor(errorClass, cause) {
    if (!ERROR_CLASSES.includes(errorClass)) {
      throw new TypeError(`error class must be one of ${ERROR_CLASSES.join(', ')}, got '${errorClass}'`);
    }
    super(errorClass, { cause });
    this.errorClass = errorClass;
  }
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT', 'ABORT_ERR']);

/**
 * Maps a failed request's error to an error class, looking through `cause`: an
 * explicit RequestFailed first, then Node's error codes (a TLS handshake failure is
 * `connect`); anything else is `read` (reset or closed mid-response, bad response).
 * @param {unknown} err
 * @returns {string}
 */
export function classify(err) {
  const chain = [];
  for (let e = err; e && typeof e === 'object' && !chain.includes(e) && chain.length < 16; e = e.cause) chain.push(e);
  const found = chain.find((e) => e instanceof RequestFailed);
  if (found) return found.errorClass;
  for (const e of chain) {
    const code = String(e.code ?? '');
    if (TIMEOUT_CODES.has(code) || e.name === 'TimeoutError') return 'timeout';
    if (CONNECT_CODES.has(code) || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL')) return 'connect';
    if (code === 'EPIPE') return 'write';
  }
  return 'read';
}

/** The class of an error status, or null for a success (below 400). */
export function errorClassOfStatus(status) {
  if (status >= 500) return 'status_5xx';
  return status >= 400 ? 'status_4xx' : null;
}

/** The measured window's figures. */
export class Result {
  /**
   * @param {object} f
   * @param {import('./histogram.js').Histogram} f.latencyUs successful requests' latency (µs)
   * @param {Record<string, number>} f.errors failed requests per class
   * @param {number} f.elapsedS length of the measured window
   * @param {number} f.inFlightAtDeadline completed after the window closed: in no figure
   * @param {number} f.sentAfterWindow sent in the tail after the window's end: in no figure
   */
  constructor({ latencyUs, errors, elapsedS, inFlightAtDeadline, sentAfterWindow = 0 }) {
    this.latencyUs = latencyUs;
    this.errors = errors;
    this.elapsedS = elapsedS;
    this.inFlightAtDeadline = inFlightAtDeadline;
    this.sentAfterWindow = sentAfterWindow;
  }

  /** Successful requests. */
  get ok() {
    return this.latencyUs.totalCount;
  }

  /** Requests completed in the window: ok plus every error. */
  get requests() {
    return this.ok + ERROR_CLASSES.reduce((sum, c) => sum + this.errors[c], 0);
  }

  /** Measured requests that got an HTTP response (success or error status). */
  get answered() {
    return this.ok + this.errors.status_4xx + this.errors.status_5xx;
  }

  /** The result file's JSON object, latency as `latency_histogram`. */
  document() {
    return {
      benchgate_result: 1,
      requests: this.requests,
      ok: this.ok,
      errors: Object.fromEntries(ERROR_CLASSES.map((c) => [c, this.errors[c]])),
      elapsed_s: this.elapsedS,
      latency_histogram: this.latencyUs.encode(),
    };
  }

  /** The line the examples print on stdout, from the histogram itself. */
  hdrLine() {
    const h = this.latencyUs;
    const [min, max] = h.totalCount > 0 ? [h.minNonZeroValue, h.maxValue] : [0, 0];
    return `HDR count=${h.totalCount} min=${min} max=${max} p99=${h.getValueAtPercentile(99)}`;
  }

  /** One log line: counts and window. */
  summary() {
    const errs = ERROR_CLASSES.map((c) => `${c}=${this.errors[c]}`).join(' ');
    return `requests=${this.requests} ok=${this.ok} errors{${errs}} elapsed_s=${this.elapsedS.toFixed(3)} ` +
      `in_flight_at_deadline=${this.inFlightAtDeadline} sent_after_window=${this.sentAfterWindow}`;
  }
}

/** Writes the result file atomically: a temporary file beside it, then a rename. */
export function writeResult(path, result) {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(result.document())}\n`);
  renameSync(tmp, path);
}
