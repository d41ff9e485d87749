// The window loop against a local counting server on 127.0.0.1, benchgate's side
// played by the test: commands in, lines out. Run: node --test test/
import { strict as assert } from 'node:assert';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { Histogram } from '../src/histogram.js';
import { EXIT_UNSUPPORTED, Unsupported, main, workloadFromEnv } from '../src/index.js';
import { offered, runLoop } from '../src/window_loop.js';
import { countingServer, factory } from './server.js';

const server = countingServer();

function workload(overrides) {
  const e = {
    BENCHGATE_URL: `${server.base}/bytes`,
    BENCHGATE_METHOD: 'GET',
    BENCHGATE_CONCURRENCY: '3',
    BENCHGATE_RATE: '0',
    BENCHGATE_WARMUP_MS: '0',
    BENCHGATE_DURATION_MS: '300',
    BENCHGATE_TIMEOUT_MS: '2000',
  };
  for (const [k, v] of Object.entries(overrides)) e[`BENCHGATE_${k}`] = v;
  return workloadFromEnv(e);
}

/** A queue: `put` a value, `take` the next one (waiting for it). */
function queue() {
  const items = [];
  const waiting = [];
  return {
    put(v) {
      const w = waiting.shift();
      if (w) w(v);
      else items.push(v);
    },
    take() {
      return items.length > 0 ? Promise.resolve(items.shift()) : new Promise((r) => waiting.push(r));
    },
  };
}

/** benchgate's side of the loop: `send` a command, `next` line out of the client. */
function drive(w) {
  const commands = queue();
  const lines = queue();
  async function* input() {
    for (;;) {
      const line = await commands.take();
      if (line === null) return;
      yield line;
    }
  }
  const done = runLoop(w, factory, { lines: input(), out: (l) => lines.put(l) });
  return {
    send: (line) => commands.put(line),
    next: () => lines.take(),
    async exit() {
      commands.put('BENCHGATE-EXIT');
      await done;
    },
  };
}

test('the window loop measures each window benchgate opens', async () => {
  const d = drive(workload({ WARMUP_MS: '200' }));
  try {
    assert.equal(await d.next(), 'BENCHGATE-WINDOWS-LOOP');
    assert.equal(await d.next(), 'BENCHGATE-READY');
    for (const k of [1, 2, 3]) {
      const before = server.served;
      d.send(`BENCHGATE-WINDOW-OPEN ${k}`);
      await sleep(300);
      d.send(`BENCHGATE-WINDOW-CLOSE ${k}`);
      const sent = server.served - before;
      const line = await d.next();
      const count = server.served - before;
      assert.ok(line.startsWith('BENCHGATE-WINDOW-RESULT '), line);
      const doc = JSON.parse(line.slice('BENCHGATE-WINDOW-RESULT '.length));
      assert.equal(doc.benchgate_result, 1);
      assert.equal(doc.window, k);
      assert.ok(doc.requests === doc.ok && doc.ok > 0, line);
      assert.equal(Histogram.decode(doc.latency_histogram).totalCount, doc.ok);
      // The client counts from its reading of OPEN to that of CLOSE, inside the span from
      // sending OPEN to reading the result: never more than the server answered there, but
      // for the requests in flight as OPEN arrived. A reading may come late on a loaded
      // machine, so the lower bound is loose; counting from the start fails.
      assert.ok(doc.requests <= count + 3 && doc.requests >= sent / 2, `${k}: ${doc.requests} vs ${sent} sent, ${count} in all`);
    }
  } finally {
    await d.exit();
  }
});

test('the window loop pauses and resumes its workers', async () => {
  const d = drive(workload({ RATE: '300', CONCURRENCY: '4' }));
  try {
    await d.next();
    await d.next();
    d.send('BENCHGATE-PAUSE');
    assert.equal(await d.next(), 'BENCHGATE-PAUSED');
    const paused = server.served;
    await sleep(200);
    assert.equal(server.served, paused, 'no request while paused');
    d.send('BENCHGATE-WINDOW-OPEN 1'); // resumes, then counts
    await sleep(300);
    d.send('BENCHGATE-WINDOW-CLOSE 1');
    const doc = JSON.parse((await d.next()).split(' ')[1]);
    // The schedule starts over at the resume: at most 300/s over the window (about
    // 90; the server shares this event loop, so a loaded machine gets fewer), no
    // burst of the 60 the pause skipped.
    const due = 300 * doc.elapsed_s;
    assert.ok(doc.requests >= 30 && doc.requests <= due + 5, `${doc.requests} in ${doc.elapsed_s} s`);
  } finally {
    await d.exit();
  }
});

test('a close for another window is ignored, its window stays open', async () => {
  const said = [];
  const lines = ['BENCHGATE-WINDOW-OPEN 1', 'BENCHGATE-WINDOW-CLOSE 2', 'BENCHGATE-WINDOW-CLOSE 1'];
  const out = [];
  await runLoop(workload({}), factory, { lines, out: (l) => out.push(l), say: (m) => said.push(m) });
  assert.deepEqual(out.slice(0, 2), ['BENCHGATE-WINDOWS-LOOP', 'BENCHGATE-READY']);
  assert.equal(out.length, 3, out.join('\n'));
  assert.equal(JSON.parse(out[2].split(' ')[1]).window, 1);
  assert.deepEqual(said, ['BENCHGATE-WINDOW-CLOSE 2 but the open window is 1; ignored']);
});

test('the loop is taken only when offered with a duration, and a factory fails before it is declared', async () => {
  const env = { BENCHGATE_WINDOWS: 'loop', BENCHGATE_WINDOW_ACK: 'stdin' };
  assert.equal(offered(workload({}), env), true);
  assert.equal(offered(workload({}), { ...env, BENCHGATE_WINDOW_ACK: undefined }), false);
  assert.equal(offered(workload({ DURATION_MS: '0', REQUESTS: '10' }), env), false);
  const out = [];
  const unsupported = () => { throw new Unsupported('HTTP/1.1 only'); };
  await assert.rejects(runLoop(workload({}), unsupported, { lines: [], out: (l) => out.push(l) }), Unsupported);
  assert.deepEqual(out, [], 'nothing declared');
  const vars = {
    BENCHGATE_URL: `${server.base}/`, BENCHGATE_CONCURRENCY: '1', BENCHGATE_DURATION_MS: '100', ...env,
  };
  assert.equal(await main({ factory: unsupported }, { name: 'test', env: vars }), EXIT_UNSUPPORTED);
});

test('run takes the loop offered in its environment and reads stdin from its start', async () => {
  // EXIT written before the warmup ends: read, not lost, so the program exits.
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [new URL('../examples/quickstart.mjs', import.meta.url).pathname], {
    env: {
      ...process.env, BENCHGATE_URL: `${server.base}/`, BENCHGATE_CONCURRENCY: '2', BENCHGATE_WARMUP_MS: '300',
      BENCHGATE_DURATION_MS: '300', BENCHGATE_WINDOWS: 'loop', BENCHGATE_WINDOW_ACK: 'stdin',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
    timeout: 30000, // a program that missed EXIT is killed, and fails below
  });
  child.stdin.end('BENCHGATE-EXIT\n');
  let out = '';
  child.stdout.on('data', (b) => { out += b; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0, out);
  assert.deepEqual(out.split('\n'), ['BENCHGATE-WINDOWS-LOOP', 'BENCHGATE-READY', '']);
});
