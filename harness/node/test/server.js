// What the tests share: a local counting server on 127.0.0.1 and a node:http
// client for it. No test of its own.
import http from 'node:http';
import { after, before } from 'node:test';

/**
 * Starts a server for the calling test file (before its tests, closed after):
 * `/status/N` answers N, `/delay/MS` answers after MS ms, anything else 200, each
 * with a 22-byte body. Returns `{ base, served }`: its URL (once started) and the
 * requests it has received.
 */
export function countingServer() {
  const s = { base: '', served: 0 };
  let server;
  before(async () => {
    server = http.createServer((req, res) => {
      s.served++;
      const status = req.url.startsWith('/status/') ? Number(req.url.slice(8)) : 200;
      const delay = req.url.startsWith('/delay/') ? Number(req.url.slice(7)) : 0;
      req.resume();
      setTimeout(() => res.writeHead(status, { 'content-length': 22 }).end('x'.repeat(22)), delay);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    s.base = `http://127.0.0.1:${server.address().port}`;
  });
  after(() => server.close());
  return s;
}

/** node:http with a keep-alive agent, built once. */
export function factory(w) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: w.concurrency });
  return () => new Promise((resolve, reject) => {
    const req = http.request(w.url, { method: w.method, agent }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
