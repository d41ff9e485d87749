// The histogram's encoding against HdrHistogram's own (Java, hdr-histogram-js) and
// its arithmetic at the bucket edges. Run: node --test test/
import { strict as assert } from 'node:assert';
import { inflateSync } from 'node:zlib';
import { test } from 'node:test';
import { HIGHEST_US, Histogram } from '../src/histogram.js';

const VALUES = [1, 2, 1000, 2047, 2048, 123456, HIGHEST_US];

test('encodes as HdrHistogram does', () => {
  const h = new Histogram();
  for (const v of VALUES) h.recordValue(v);
  // hdr-histogram-js 3.0.1's output for these values, its two nonstandard header
  // fields set as Java writes them (normalizing offset 0, conversion ratio 1.0).
  assert.equal(h.encode(), 'HISTFAAAADB4nJNpmSzMwMAgyAABzFCaEURcm7yEwf4DVISJ6SQ/02oBJqb+OKbLbxiZAMGQCOY=');
  const empty = inflateSync(Buffer.from(new Histogram().encode(), 'base64').subarray(8));
  assert.deepEqual([empty.readInt32BE(4), empty[40]], [1, 0], 'an empty histogram: one zero count');
});

test('decodes what it encodes', () => {
  const h = new Histogram();
  for (let i = 0; i < 5000; i++) h.recordValue(Math.floor(Math.exp(Math.random() * Math.log(HIGHEST_US))));
  const d = Histogram.decode(h.encode());
  assert.equal(d.totalCount, 5000);
  assert.deepEqual(d.counts, h.counts);
  for (const p of [0, 50, 99, 100]) assert.equal(d.getValueAtPercentile(p), h.getValueAtPercentile(p));
});

test('percentiles are bucket edges; min and max are the values recorded', () => {
  const h = new Histogram();
  for (const v of VALUES) h.recordValue(v);
  assert.deepEqual([h.totalCount, h.minNonZeroValue, h.maxValue], [7, 1, HIGHEST_US]);
  assert.equal(h.getValueAtPercentile(0), 1);
  assert.equal(h.getValueAtPercentile(50), 2047); // exact below 2048
  assert.equal(h.getValueAtPercentile(80), 123519); // 123456 is in [123392, 123519]
  assert.equal(h.getValueAtPercentile(100), 3600809983);
  assert.throws(() => h.recordValue(HIGHEST_US + 1), RangeError);
  assert.throws(() => h.recordValue(1.5), RangeError);
});
