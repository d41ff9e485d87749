// The harness against a local counting server on 127.0.0.1: windows, loops,
// errors, exit codes and the result file. Run: node --test test/
import { strict as assert } from 'node:assert';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { test } from 'node:test';
import { Histogram } from '../src/histogram.js';
import {
  BadWorkload, CLOSE_MARKER, EXIT_BAD_WORKLOAD, EXIT_NO_RESPONSE, EXIT_OK, EXIT_UNSUPPORTED, OPEN_MARKER,
  RequestFailed, Unsupported, VERSION, classify, main, measure, workloadFromEnv,
} from '../src/index.js';
import { countingServer, factory } from './server.js';

const server = countingServer();

function env(path, overrides = {}) {
  const e = {
    BENCHGATE_URL: path.startsWith('http') ? path : server.base + path,
    BENCHGATE_METHOD: 'GET',
    BENCHGATE_CONCURRENCY: '2',
    BENCHGATE_RATE: '0',
    BENCHGATE_WARMUP_MS: '0',
    BENCHGATE_DURATION_MS: '0',
    BENCHGATE_REQUESTS: '0',
    BENCHGATE_TIMEOUT_MS: '2000',
  };
  for (const [k, v] of Object.entries(overrides)) e[`BENCHGATE_${k}`] = v;
  return e;
}

const quiet = (overrides, path = '/bytes') => measure(workloadFromEnv(env(path, overrides)), factory, () => {});

test('request-count mode measures exactly that many', async () => {
  const before = server.served;
  const markers = [];
  const r = await measure(workloadFromEnv(env('/bytes', { REQUESTS: '300', WARMUP_MS: '100' })), factory,
    (m) => markers.push(m));
  assert.equal(r.ok, 300);
  assert.equal(r.requests, 300);
  assert.ok(server.served - before >= 300, 'the warmup comes on top');
  assert.deepEqual(markers, [OPEN_MARKER, CLOSE_MARKER]);
  assert.ok(r.elapsedS > 0);
});

test('duration mode accounts for every request the server saw', async () => {
  const before = server.served;
  const marked = [];
  const r = await measure(workloadFromEnv(env('/bytes', { DURATION_MS: '400', CONCURRENCY: '3' })), factory,
    () => marked.push(performance.now()));
  assert.ok(r.ok > 50, r.summary());
  // Every request is measured or in flight at the deadline, but for at most one per
  // worker sent before the open marker was printed.
  const unmeasured = server.served - before - (r.requests + r.inFlightAtDeadline + r.sentAfterWindow);
  assert.ok(unmeasured >= 0 && unmeasured <= 3, `${unmeasured} unmeasured: ${r.summary()}`);
  assert.ok(r.sentAfterWindow > 0, 'the load goes on in the tail');
  // From the open to the close marker: 400 ms, or more when a loaded machine wakes
  // the closing timer late (the server's window then widens too).
  const betweenMarkers = (marked[1] - marked[0]) / 1000;
  assert.ok(r.elapsedS >= 0.395, `elapsed ${r.elapsedS}: shorter than the window`);
  assert.ok(Math.abs(r.elapsedS - betweenMarkers) < 0.02,
    `elapsed ${r.elapsedS}, ${betweenMarkers} s between the markers: from the open to the close marker`);
});

test('open loop holds the rate', async () => {
  const r = await quiet({ RATE: '200', DURATION_MS: '500', CONCURRENCY: '4' });
  // The schedule holds 200/s for the window and a 100 ms tail: 120 requests in all.
  // A late wake-up on a loaded machine widens the window: its share follows it,
  // give or take the start due at each edge (elapsed_s is read after the close
  // timer fires: 0.502 s held 102 starts at load 9).
  const inWindow = r.requests + r.inFlightAtDeadline;
  const all = inWindow + r.sentAfterWindow;
  assert.ok(all >= 115 && all <= 121, r.summary());
  assert.ok(inWindow >= 200 * r.elapsedS - 5 && inWindow <= 200 * r.elapsedS + 2, r.summary());
});

test('open loop latency runs from the intended start', async () => {
  // One worker, 100/s wanted, 30 ms per response: the schedule falls behind and the
  // queueing delay must show in the latency, not vanish.
  const r = await quiet({ RATE: '100', DURATION_MS: '600', CONCURRENCY: '1' }, '/delay/30');
  assert.ok(r.ok >= 10, r.summary());
  assert.ok(r.latencyUs.minNonZeroValue >= 30000, `min ${r.latencyUs.minNonZeroValue}`);
  assert.ok(r.latencyUs.maxValue > 200000, `max ${r.latencyUs.maxValue}: a closed loop would stay near 30 ms`);
});

test('error statuses are counted in their class', async () => {
  const r4 = await quiet({ REQUESTS: '20' }, '/status/404');
  assert.deepEqual([r4.ok, r4.errors.status_4xx], [0, 20]);
  const r5 = await quiet({ REQUESTS: '20' }, '/status/503');
  assert.deepEqual([r5.ok, r5.errors.status_5xx, r5.answered], [0, 20, 20]);
});

test('the result file decodes to the measured histogram', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'harness-test-'));
  try {
    const file = join(dir, 'result.json');
    const code = await main({ factory }, { name: 'test', env: env('/bytes', { REQUESTS: '50', RESULT_PATH: file }) });
    assert.equal(code, EXIT_OK);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    assert.deepEqual([doc.benchgate_result, doc.requests, doc.ok], [1, 50, 50]);
    assert.deepEqual(Object.keys(doc.errors), ['connect', 'timeout', 'read', 'write', 'status_4xx', 'status_5xx']);
    assert.equal(Histogram.decode(doc.latency_histogram).totalCount, 50);
    // The V2 header as every other port writes it (benchgate's reader checks both).
    const payload = inflateSync(Buffer.from(doc.latency_histogram, 'base64').subarray(8));
    assert.equal(payload.readInt32BE(8), 0, 'normalizingIndexOffset');
    assert.equal(payload.readDoubleBE(32), 1.0, 'integerToDoubleValueConversionRatio');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // One shared send function instead of a factory.
  let calls = 0;
  assert.equal(await main(async () => { calls++; return 204; }, { name: 'test', env: env('/', { REQUESTS: '7' }) }),
    EXIT_OK);
  assert.ok(calls >= 7);
});

test('no response exits 1 and counts connect errors', async () => {
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const r = await quiet({ REQUESTS: '5' }, `http://127.0.0.1:${port}/`);
  assert.deepEqual([r.errors.connect, r.ok], [5, 0]);
  assert.equal(await main({ factory }, { name: 'test', env: env(`http://127.0.0.1:${port}/`, { REQUESTS: '5' }) }),
    EXIT_NO_RESPONSE);
});

test('bad variables exit 2 naming the variable', async () => {
  const cases = [
    [{ CONCURRENCY: 'x' }, "BENCHGATE_CONCURRENCY must be a non-negative integer, got 'x'"],
    [{ RATE: '-1' }, 'BENCHGATE_RATE must be a decimal number >= 0'],
    [{ DURATION_MS: '5' }, 'set exactly one of BENCHGATE_DURATION_MS and BENCHGATE_REQUESTS'],
    [{ HTTP_VERSION: '3' }, 'BENCHGATE_HTTP_VERSION must be 1.1 or 2'],
    [{ METHOD: 'PATCH' }, 'BENCHGATE_METHOD must be one of'],
    [{ URL: '' }, 'BENCHGATE_URL is not set'],
  ];
  for (const [bad, message] of cases) {
    assert.throws(() => workloadFromEnv(env('/x', { REQUESTS: '5', ...bad })),
      (e) => e instanceof BadWorkload && e.message.includes(message));
  }
  assert.equal(await main(() => 200, { name: 'test', env: env('/', { REQUESTS: '1', CONCURRENCY: '0' }) }),
    EXIT_BAD_WORKLOAD);
});

test('an unsupported workload exits 3', async () => {
  const h1Only = { factory: (w) => { if (w.httpVersion === '2') throw new Unsupported('HTTP/1.1 only'); return () => 200; } };
  assert.equal(await main(h1Only, { name: 'test', env: env('/', { REQUESTS: '1', HTTP_VERSION: '2' }) }),
    EXIT_UNSUPPORTED);
});

test('classify reads the cause chain', () => {
  const coded = (code) => Object.assign(new Error(code), { code });
  assert.equal(classify(new Error('wrapped', { cause: coded('ECONNREFUSED') })), 'connect');
  assert.equal(classify(coded('ETIMEDOUT')), 'timeout');
  assert.equal(classify(coded('EPIPE')), 'write');
  assert.equal(classify(coded('ECONNRESET')), 'read');
  assert.equal(classify(new Error('x', { cause: new RequestFailed('timeout') })), 'timeout');
  assert.throws(() => new RequestFailed('boom'), /error class must be one of/);
  assert.match(VERSION, /^\d+\.\d+\.\d+$/);
});
