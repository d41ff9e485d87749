// harness/node/examples/quickstart.mjs
import http from 'node:http';
import { run, Unsupported } from 'benchgate-harness';

await run({
  factory(w) { // called once: one keep-alive agent for every worker
    if (w.tls || w.httpVersion === '2') throw new Unsupported('plain HTTP/1.1 only');
    const agent = new http.Agent({ keepAlive: true, maxSockets: w.concurrency });
    return () => new Promise((resolve, reject) => {
      http.request(w.url, { method: w.method, agent }, (res) => {
        res.on('error', reject).on('end', () => resolve(res.statusCode));
        res.resume(); // read the whole body
      }).on('error', reject).end(w.body ?? undefined);
    });
  },
});
