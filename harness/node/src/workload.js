// The workload benchgate hands a client in its BENCHGATE_* variables
// (docs/external-clients.md, "Environment variables"), validated.

/** The request methods benchgate sends. */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];

/** A BENCHGATE_* variable is missing or invalid (exit code 2). */
export class BadWorkload extends Error {
  name = 'BadWorkload';
}

/** The client cannot run this workload, e.g. HTTP/2 (exit code 3). Throw it from your factory or send. */
export class Unsupported extends Error {
  name = 'Unsupported';
}

/**
 * One trial's workload. Durations in ms, sizes in bytes; `rate` 0 is a closed loop.
 * @typedef {object} Workload
 * @property {string} url full target URL
 * @property {string} baseUrl scheme, host and port
 * @property {string} method GET, HEAD, POST, PUT or DELETE
 * @property {string} path path and query
 * @property {number} bodyBytes request body size, 0 = none
 * @property {Buffer|null} body bodyBytes bytes of 'x', or null
 * @property {number} concurrency workers (closed loop) or most in flight (open loop)
 * @property {number} rate open loop: requests per second; 0 = closed loop
 * @property {number} warmupMs warmup before the measurement
 * @property {number} durationMs measurement length; 0 when `requests` is set
 * @property {number} requests measured requests; 0 when `durationMs` is set
 * @property {number} timeoutMs per-request timeout
 * @property {'1.1'|'2'} httpVersion HTTP version to speak
 * @property {boolean} tls HTTPS with a self-signed certificate: accept it
 * @property {string} resultPath where the result file goes; '' = none
 */

/**
 * Reads and validates the BENCHGATE_* variables.
 * @param {Record<string, string|undefined>} [env] default: process.env
 * @returns {Workload}
 * @throws {BadWorkload} naming the variable and what it expected
 */
export function workloadFromEnv(env = process.env) {
  const text = (name, dflt) => (env[name] === undefined || env[name] === '' ? dflt : env[name]);
  const count = (name, dflt) => {
    const raw = text(name, '');
    if (raw === '') return dflt;
    if (!/^[0-9]{1,15}$/.test(raw)) throw new BadWorkload(`${name} must be a non-negative integer, got '${raw}'`);
    return Number(raw);
  };
  const url = text('BENCHGATE_URL', '');
  if (!url) throw new BadWorkload('BENCHGATE_URL is not set (e.g. http://127.0.0.1:8080/bytes/22)');
  const method = text('BENCHGATE_METHOD', 'GET').toUpperCase();
  if (!METHODS.includes(method)) {
    throw new BadWorkload(`BENCHGATE_METHOD must be one of ${METHODS.join(', ')}, got '${method}'`);
  }
  const concurrency = count('BENCHGATE_CONCURRENCY', 1);
  if (concurrency < 1) throw new BadWorkload('BENCHGATE_CONCURRENCY must be >= 1, got 0');
  const rateText = text('BENCHGATE_RATE', '0');
  const rate = /^[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?$|^[0-9]+\.$/.test(rateText) ? Number(rateText) : NaN;
  if (!Number.isFinite(rate) || rate < 0) {
    throw new BadWorkload(`BENCHGATE_RATE must be a decimal number >= 0 (0 = closed loop), got '${rateText}'`);
  }
  const durationMs = count('BENCHGATE_DURATION_MS', 0);
  const requests = count('BENCHGATE_REQUESTS', 0);
  if ((durationMs === 0) === (requests === 0)) {
    throw new BadWorkload(
      `set exactly one of BENCHGATE_DURATION_MS and BENCHGATE_REQUESTS (got ${durationMs} and ${requests})`,
    );
  }
  const httpVersion = text('BENCHGATE_HTTP_VERSION', '1.1');
  if (httpVersion !== '1.1' && httpVersion !== '2') {
    throw new BadWorkload(`BENCHGATE_HTTP_VERSION must be 1.1 or 2, got '${httpVersion}'`);
  }
  const tls = text('BENCHGATE_TLS', '0');
  if (tls !== '0' && tls !== '1') throw new BadWorkload(`BENCHGATE_TLS must be 0 or 1, got '${tls}'`);
  const bodyBytes = count('BENCHGATE_BODY_BYTES', 0);
  return Object.freeze({
    url,
    baseUrl: text('BENCHGATE_BASE_URL', ''),
    method,
    path: text('BENCHGATE_PATH', ''),
    bodyBytes,
    body: bodyBytes > 0 ? Buffer.alloc(bodyBytes, 'x') : null,
    concurrency,
    rate,
    warmupMs: count('BENCHGATE_WARMUP_MS', 0),
    durationMs,
    requests,
    timeoutMs: Math.max(1, count('BENCHGATE_TIMEOUT_MS', 10000)),
    httpVersion,
    tls: tls === '1',
    resultPath: text('BENCHGATE_RESULT_PATH', ''),
  });
}
