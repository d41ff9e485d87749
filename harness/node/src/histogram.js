// A latency histogram with HdrHistogram's layout (lowest 1, highest HIGHEST_US, 3
// significant digits) and its V2 compressed encoding, the one every harness writes
// to the result file. Written here so the package has no dependencies: an install
// by path (`npm install <dir>`, a symlink) then runs as well as a packed one.

import { deflateSync, inflateSync } from 'node:zlib';

/** Latency is recorded in microseconds, up to an hour, with 3 significant digits. */
export const HIGHEST_US = 3_600_000_000;
const DIGITS = 3;
// 3 digits: 2048 sub-buckets (half 1024, magnitude 10); 22 buckets reach HIGHEST_US.
const SUB_HALF_MAGNITUDE = 10;
const SUB_HALF = 1 << SUB_HALF_MAGNITUDE;
const SUB_MASK = 2 * SUB_HALF - 1;
const LENGTH = 23 * SUB_HALF;
const COOKIE = 0x1c849313; // V2 encoding, 64-bit words
const COMPRESSED_COOKIE = 0x1c849314;

/** Counts index of a value in [0, HIGHEST_US] (below 2^32, so 32-bit arithmetic). */
function indexOf(value) {
  const bucket = 21 - Math.clz32(value | SUB_MASK);
  return ((bucket + 1) << SUB_HALF_MAGNITUDE) + (value >>> bucket) - SUB_HALF;
}

/** Bucket and lowest value of a counts index. */
function bucketOf(index) {
  let bucket = (index >> SUB_HALF_MAGNITUDE) - 1;
  let sub = (index & (SUB_HALF - 1)) + SUB_HALF;
  if (bucket < 0) [bucket, sub] = [0, sub - SUB_HALF];
  return { bucket, lowest: sub * 2 ** bucket };
}

export class Histogram {
  counts = new Float64Array(LENGTH);
  totalCount = 0;
  minNonZeroValue = Number.MAX_SAFE_INTEGER;
  maxValue = 0;

  /** @param {number} value an integer in [0, HIGHEST_US] */
  recordValue(value) {
    if (!Number.isInteger(value) || value < 0 || value > HIGHEST_US) {
      throw new RangeError(`value ${value} outside [0, ${HIGHEST_US}]`);
    }
    this.counts[indexOf(value)]++;
    this.totalCount++;
    if (value > this.maxValue) this.maxValue = value;
    if (value !== 0 && value < this.minNonZeroValue) this.minNonZeroValue = value;
  }

  /** The highest value equivalent to the one below which `percentile` % of the counts are. */
  getValueAtPercentile(percentile) {
    const fp = (Math.min(percentile, 100) / 100) * this.totalCount;
    const wanted = Math.max(Math.ceil(fp - fp * Number.EPSILON), 1);
    let seen = 0;
    for (let i = 0; i < LENGTH; i++) {
      seen += this.counts[i];
      if (seen >= wanted) {
        const { bucket, lowest } = bucketOf(i);
        return percentile === 0 ? lowest : lowest + 2 ** bucket - 1;
      }
    }
    return 0;
  }

  /** HdrHistogram's V2 compressed encoding (zlib), base64: the result file's `latency_histogram`. */
  encode() {
    const bytes = [];
    const limit = indexOf(this.maxValue) + 1;
    for (let i = 0; i < limit; i++) {
      let n = this.counts[i];
      if (n === 0) { // a run of zeros is one negative count
        let zeros = 1;
        while (i + 1 < limit && this.counts[i + 1] === 0) {
          zeros++;
          i++;
        }
        if (zeros > 1) n = -zeros;
      }
      let zz = n >= 0 ? 2 * n : -2 * n - 1; // ZigZag, then LEB128
      while (zz >= 0x80) {
        bytes.push((zz % 0x80) | 0x80);
        zz = Math.floor(zz / 0x80);
      }
      bytes.push(zz);
    }
    const payload = Buffer.alloc(40 + bytes.length);
    payload.writeInt32BE(COOKIE, 0);
    payload.writeInt32BE(bytes.length, 4);
    payload.writeInt32BE(0, 8); // normalizing index offset
    payload.writeInt32BE(DIGITS, 12);
    payload.writeBigInt64BE(1n, 16); // lowest discernible value
    payload.writeBigInt64BE(BigInt(HIGHEST_US), 24);
    payload.writeDoubleBE(1.0, 32); // integer to double conversion ratio
    Buffer.from(bytes).copy(payload, 40);
    const deflated = deflateSync(payload);
    const out = Buffer.alloc(8 + deflated.length);
    out.writeInt32BE(COMPRESSED_COOKIE, 0);
    out.writeInt32BE(deflated.length, 4);
    deflated.copy(out, 8);
    return out.toString('base64');
  }

  /** Reads what `encode` wrote (this package's layout only), for tests. */
  static decode(base64) {
    const payload = inflateSync(Buffer.from(base64, 'base64').subarray(8));
    if (payload.readInt32BE(0) !== COOKIE || payload.readBigInt64BE(24) !== BigInt(HIGHEST_US)) {
      throw new Error('not a V2 histogram with this layout');
    }
    const h = new Histogram();
    let [i, index] = [40, 0];
    const end = 40 + payload.readInt32BE(4);
    while (i < end) {
      let [zz, scale] = [0, 1];
      for (;;) {
        const b = payload[i++];
        zz += (b & 0x7f) * scale;
        scale *= 0x80;
        if (b < 0x80) break;
      }
      const n = zz % 2 === 0 ? zz / 2 : -(zz + 1) / 2;
      if (n < 0) {
        index -= n;
        continue;
      }
      if (n > 0) {
        const { lowest } = bucketOf(index);
        h.counts[index] = n;
        h.totalCount += n;
        h.maxValue = Math.max(h.maxValue, lowest);
        if (lowest !== 0) h.minNonZeroValue = Math.min(h.minNonZeroValue, lowest);
      }
      index++;
    }
    return h;
  }
}
