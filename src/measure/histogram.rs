//! Latency histograms: HdrHistogram in µs, 3 significant digits, auto-resizing
//! upward only when a value exceeds the initial 1 hour range (never in practice).
//! Encoded with the standard V2 + DEFLATE serializer, then base64 (standard
//! alphabet), as HdrHistogram's `encodeIntoCompressedByteBuffer` + Base64 does.

use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest trackable latency before auto-resize: one hour in µs.
const HIGHEST_US: u64 = 3_600_000_000;

/// A latency recorder (µs).
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        let mut inner = Histogram::new_with_bounds(1, HIGHEST_US, 3).expect("valid HDR bounds");
        inner.auto(true);
        LatencyHistogram { inner }
    }

    /// Records one latency; sub-microsecond values count as 1 µs.
    #[inline]
    pub fn record(&mut self, latency: Duration) {
        let us = (latency.as_micros() as u64).max(1);
        // `auto(true)` makes recording infallible for any u64.
        let _ = self.inner.record(us);
    }

    pub fn record_us(&mut self, us: u64) {
        let _ = self.inner.record(us.max(1));
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same bounds and auto-resize: add cannot fail.
        let _ = self.inner.add(&other.inner);
    }

    pub fn len(&self) -> u64 {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    pub fn inner(&self) -> &Histogram<u64> {
        &self.inner
    }

    pub fn from_inner(inner: Histogram<u64>) -> Self {
        LatencyHistogram { inner }
    }

    /// Summary statistics, or `None` for an empty histogram.
    pub fn summary(&self) -> Option<LatencySummary> {
        if self.inner.is_empty() {
            return None;
        }
        let h = &self.inner;
        Some(LatencySummary {
            count: h.len(),
            min_us: h.min(),
            mean_us: h.mean(),
            stdev_us: h.stdev(),
            p50_us: h.value_at_quantile(0.50),
            p90_us: h.value_at_quantile(0.90),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            max_us: h.max(),
        })
    }

    /// Standard compressed encoding (V2 + DEFLATE), base64.
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.inner, &mut buf)
            .expect("serializing into a Vec cannot fail");
        base64::engine::general_purpose::STANDARD.encode(buf)
    }

    /// Decodes the standard compressed encoding (base64 of V2, with or without
    /// DEFLATE). The text is untrusted (results files from forks, command
    /// clients' result files): it is bounded before anything is allocated from
    /// what it claims ([`check_encoding`]). Errors say why the text is not a
    /// benchgate histogram; callers add which file and cell it came from.
    pub fn decode(text: &str) -> Result<LatencyHistogram, String> {
        let v2 = check_encoding(text)?;
        let mut inner: Histogram<u64> = Deserializer::new()
            .deserialize(&mut v2.as_slice())
            .map_err(|e| format!("{NOT_OURS}: {e}"))?;
        check_total(&inner).map_err(|e| format!("{NOT_OURS}: {e}"))?;
        inner.auto(true);
        Ok(LatencyHistogram { inner })
    }
}

/// A histogram crosses a process boundary (the driver's report) as its
/// encoded text ([`LatencyHistogram::encode`]), read back with the same
/// bounds as any other ([`LatencyHistogram::decode`]).
impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        LatencyHistogram::decode(&text).map_err(serde::de::Error::custom)
    }
}

/// Longest histogram text decoded (base64 characters). A benchgate histogram
/// is a few KiB; the largest any port writes within [`MAX_COUNTS`] is about 1 MiB.
pub const MAX_ENCODED_CHARS: usize = 2 * 1024 * 1024;

/// Most counters a decoded histogram may have (the crate allocates 8 bytes
/// each, so 4 MiB): 3 significant digits fit any range (at most ~54k
/// counters), 4 digits any range up to ~1 year in µs, 5 digits up to ~1 s.
/// benchgate records 3 digits from 1 µs to 1 h (~23.5k counters).
pub const MAX_COUNTS: u64 = 1 << 19;

/// Most values a histogram read from outside may hold (2^48, 2.8e14: a
/// million requests a second for nine years). hdrhistogram saturates each
/// counter and the total, but sums the counters unchecked for percentiles,
/// so counts near 2^64 would overflow there (a panic, or wrong percentiles in
/// a release build); merging a thousand such histograms stays below 2^58.
pub const MAX_TOTAL_COUNT: u64 = 1 << 48;

/// Checks that `h`'s counters add up to at most [`MAX_TOTAL_COUNT`]
/// (summed with overflow checks: hdrhistogram's own total saturates).
pub fn check_total(h: &Histogram<u64>) -> Result<(), String> {
    let total = h
        .iter_recorded()
        .try_fold(0u64, |sum, v| sum.checked_add(v.count_at_value()));
    match total {
        Some(n) if n <= MAX_TOTAL_COUNT => Ok(()),
        Some(n) => Err(format!(
            "its counts add up to {n} values, over the limit of {MAX_TOTAL_COUNT}"
        )),
        None => Err(format!(
            "its counts add up to more than 2^64 values (the limit is {MAX_TOTAL_COUNT})"
        )),
    }
}

/// Most significant digits HdrHistogram supports.
pub const MAX_SIGFIG: u32 = 5;

/// Largest lowest discernible value accepted: 1 s in µs (benchgate records from 1 µs).
pub const MAX_LOWEST: u64 = 1_000_000;

/// Largest highest trackable value accepted: HdrHistogram's own maximum (`i64::MAX`).
pub const MAX_HIGHEST: u64 = i64::MAX as u64;

/// The V2 encoding's cookies as HdrHistogram writes them (base | 0x10).
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
/// Bytes of the V2 header after the cookie: payload length, normalizing
/// offset, significant digits (u32 each), lowest, highest (u64 each),
/// integer-to-double conversion ratio (f64).
const V2_HEADER: usize = 36;
/// The longest varint (zig-zag LEB128 as HdrHistogram writes it) of one count.
const MAX_VARINT: u64 = 9;

const NOT_OURS: &str = "not a benchgate histogram (HdrHistogram V2 encoding, base64)";

/// Checks an untrusted histogram text and returns the uncompressed V2
/// encoding (cookie, header, payload) to hand to the hdrhistogram crate.
///
/// Bounds, each checked before the allocation it guards: the text's length
/// ([`MAX_ENCODED_CHARS`]); the V2 header (significant digits at most
/// [`MAX_SIGFIG`], lowest 1..=[`MAX_LOWEST`], highest at least twice lowest
/// and at most [`MAX_HIGHEST`], normalizing offset 0, conversion ratio 1, at
/// most [`MAX_COUNTS`] counters); the payload length (at most 9 bytes per
/// counter, and it must actually be there: the inflated stream is read
/// through a limit and never buffered beyond what it yields). So a header
/// claiming a 4 GiB payload allocates nothing from that claim.
pub fn check_encoding(text: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    let text = text.trim();
    if text.len() > MAX_ENCODED_CHARS {
        return Err(format!(
            "{NOT_OURS}: {} characters, over the {MAX_ENCODED_CHARS} character limit",
            text.len()
        ));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("{NOT_OURS}: not valid base64: {e}"))?;
    let cookie = be_u32(&bytes, 0).ok_or_else(|| format!("{NOT_OURS}: too short"))?;
    match cookie {
        V2_COOKIE => {
            let payload_len = check_header(&bytes[4..])?;
            let present = bytes.len() - 4 - V2_HEADER;
            if payload_len as usize > present {
                return Err(format!(
                    "{NOT_OURS}: its header claims a {payload_len} byte payload, but {present} bytes follow"
                ));
            }
            Ok(bytes)
        }
        V2_COMPRESSED_COOKIE => {
            use std::io::Read as _;
            let stated =
                be_u32(&bytes, 4).ok_or_else(|| format!("{NOT_OURS}: too short"))? as usize;
            let deflated = &bytes[8..];
            if stated > deflated.len() {
                return Err(format!(
                    "{NOT_OURS}: it claims {stated} compressed bytes, but {} follow",
                    deflated.len()
                ));
            }
            let mut inflate = flate2::read::ZlibDecoder::new(&deflated[..stated]);
            let mut head = [0u8; 4 + V2_HEADER];
            inflate
                .read_exact(&mut head)
                .map_err(|e| format!("{NOT_OURS}: its compressed header does not inflate: {e}"))?;
            if be_u32(&head, 0) != Some(V2_COOKIE) {
                return Err(format!(
                    "{NOT_OURS}: the compressed data is not a V2 encoding"
                ));
            }
            let payload_len = check_header(&head[4..])?;
            // The claimed length was checked against the counter cap; only
            // what the stream yields is buffered (read_to_end grows with it).
            let mut v2 = head.to_vec();
            inflate
                .take(u64::from(payload_len))
                .read_to_end(&mut v2)
                .map_err(|e| format!("{NOT_OURS}: its payload does not inflate: {e}"))?;
            let got = v2.len() - head.len();
            if got != payload_len as usize {
                return Err(format!(
                    "{NOT_OURS}: its header claims a {payload_len} byte payload, but {got} bytes inflate"
                ));
            }
            Ok(v2)
        }
        other => Err(format!("{NOT_OURS}: unknown cookie {other:#010x}")),
    }
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Checks the V2 header (after the cookie) and returns its payload length.
fn check_header(h: &[u8]) -> Result<u32, String> {
    let short = || format!("{NOT_OURS}: its header is truncated");
    let payload_len = be_u32(h, 0).ok_or_else(short)?;
    let offset = be_u32(h, 4).ok_or_else(short)?;
    let sigfig = be_u32(h, 8).ok_or_else(short)?;
    let low = be_u64(h, 12).ok_or_else(short)?;
    let high = be_u64(h, 20).ok_or_else(short)?;
    let ratio = f64::from_bits(be_u64(h, 28).ok_or_else(short)?);
    if offset != 0 || ratio != 1.0 {
        return Err(format!(
            "{NOT_OURS}: normalizing offset {offset} and conversion ratio {ratio} (must be 0 and 1)"
        ));
    }
    if sigfig > MAX_SIGFIG {
        return Err(format!(
            "{NOT_OURS}: {sigfig} significant digits, over the {MAX_SIGFIG} limit"
        ));
    }
    if !(1..=MAX_LOWEST).contains(&low) || high < 2 * low || high > MAX_HIGHEST {
        return Err(format!(
            "{NOT_OURS}: trackable range {low}..={high} (lowest must be 1..={MAX_LOWEST}, highest at least twice lowest and at most {MAX_HIGHEST})"
        ));
    }
    let counts = counts_len(low, high, sigfig)
        .ok_or_else(|| format!("{NOT_OURS}: {sigfig} digits cannot represent lowest {low}"))?;
    if counts > MAX_COUNTS {
        return Err(format!(
            "{NOT_OURS}: {sigfig} digits over {low}..={high} need {counts} counters, over the {MAX_COUNTS} limit"
        ));
    }
    if u64::from(payload_len) > counts * MAX_VARINT {
        return Err(format!(
            "{NOT_OURS}: its header claims a {payload_len} byte payload, more than {counts} counters can encode ({} bytes)",
            counts * MAX_VARINT
        ));
    }
    Ok(payload_len)
}

/// How many counters `Histogram::new_with_bounds(low, high, sigfig)` allocates
/// (hdrhistogram 7's arithmetic), or `None` if it refuses the bounds.
fn counts_len(low: u64, high: u64, sigfig: u32) -> Option<u64> {
    let largest = 2 * 10u64.pow(sigfig);
    let sub_bucket_count_magnitude = 64 - (largest - 1).leading_zeros(); // ceil(log2)
    let unit_magnitude = 63 - low.leading_zeros(); // floor(log2), low >= 1
    if unit_magnitude + sub_bucket_count_magnitude > 63 {
        return None;
    }
    let sub_bucket_count = 1u64 << sub_bucket_count_magnitude;
    let mut smallest_untrackable = sub_bucket_count << unit_magnitude;
    let mut buckets = 1u64;
    while smallest_untrackable <= high {
        if smallest_untrackable > u64::MAX / 2 {
            buckets += 1;
            break;
        }
        smallest_untrackable <<= 1;
        buckets += 1;
    }
    Some((buckets + 1) * (sub_bucket_count / 2))
}

/// Latency figures of one histogram, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencySummary {
    pub count: u64,
    pub min_us: u64,
    pub mean_us: f64,
    pub stdev_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_values() {
        let mut h = LatencyHistogram::new();
        for us in 1..=1000u64 {
            h.record_us(us);
        }
        let s = h.summary().unwrap();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min_us, 1);
        assert_eq!(s.max_us, 1000);
        assert_eq!(s.p50_us, 500);
        assert_eq!(s.p99_us, 990);
        assert!((s.mean_us - 500.5).abs() < 1.0);
    }

    #[test]
    fn empty_has_no_summary() {
        assert!(LatencyHistogram::new().summary().is_none());
    }

    #[test]
    fn encode_decode_round_trip_and_merge() {
        let mut a = LatencyHistogram::new();
        a.record(Duration::from_millis(10));
        a.record(Duration::from_millis(20));
        let mut b = LatencyHistogram::new();
        b.record(Duration::from_secs(2));
        a.merge(&b);
        let back = LatencyHistogram::decode(&a.encode()).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back.summary(), a.summary());
        assert!(LatencyHistogram::decode("not base64 !!").is_err());
        assert!(LatencyHistogram::decode("AAAA").is_err());
    }

    /// As a driver's report carries it: the encoded text, read back with
    /// decode's bounds; an empty histogram crosses too.
    #[test]
    fn serde_carries_the_encoding() {
        let mut a = LatencyHistogram::new();
        a.record(Duration::from_micros(250));
        a.record(Duration::from_millis(3));
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, format!("\"{}\"", a.encode()));
        let back: LatencyHistogram = serde_json::from_str(&json).unwrap();
        assert_eq!(back.summary(), a.summary());
        let empty: LatencyHistogram =
            serde_json::from_str(&serde_json::to_string(&LatencyHistogram::new()).unwrap())
                .unwrap();
        assert!(empty.is_empty());
        let junk = serde_json::from_str::<LatencyHistogram>("\"AAAA\"").unwrap_err();
        assert!(junk.to_string().contains(NOT_OURS), "{junk}");
    }

    /// A V2 header (cookie included) with the given fields.
    pub(crate) fn v2_header(payload_len: u32, sigfig: u32, low: u64, high: u64) -> Vec<u8> {
        let mut b = V2_COOKIE.to_be_bytes().to_vec();
        b.extend(payload_len.to_be_bytes());
        b.extend(0u32.to_be_bytes());
        b.extend(sigfig.to_be_bytes());
        b.extend(low.to_be_bytes());
        b.extend(high.to_be_bytes());
        b.extend(1.0f64.to_bits().to_be_bytes());
        b
    }

    /// base64 of the compressed encoding of `v2`.
    fn compressed(v2: &[u8]) -> String {
        use std::io::Write as _;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(v2).unwrap();
        let z = z.finish().unwrap();
        let mut b = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        b.extend((z.len() as u32).to_be_bytes());
        b.extend(z);
        base64::engine::general_purpose::STANDARD.encode(b)
    }

    #[test]
    fn counts_len_is_the_crates() {
        for (low, high, sigfig) in [
            (1, 3_600_000_000, 3),
            (1, 2, 0),
            (1, MAX_HIGHEST, 3),
            (1000, 60_000_000, 2),
            (7, 1 << 40, 4),
            (1, 1_000_000, 5),
            (1, u64::MAX, 1),
        ] {
            let h = Histogram::<u8>::new_with_bounds(low, high, sigfig as u8).unwrap();
            assert_eq!(
                counts_len(low, high, sigfig),
                Some(h.distinct_values() as u64),
                "{low} {high} {sigfig}"
            );
        }
        assert!(counts_len(1 << 50, 1 << 60, 5).is_none());
    }

    #[test]
    fn a_header_claiming_4_gib_is_refused_before_allocating() {
        let claim = u32::MAX;
        let e =
            LatencyHistogram::decode(&compressed(&v2_header(claim, 3, 1, HIGHEST_US))).unwrap_err();
        assert!(e.contains("not a benchgate histogram"), "{e}");
        assert!(
            e.contains("claims a 4294967295 byte payload, more than 23552 counters can encode"),
            "{e}"
        );
        // Uncompressed V2 too.
        let plain =
            base64::engine::general_purpose::STANDARD.encode(v2_header(claim, 3, 1, HIGHEST_US));
        let e = LatencyHistogram::decode(&plain).unwrap_err();
        assert!(
            e.contains("claims a 4294967295 byte payload, more than"),
            "{e}"
        );
        let plain =
            base64::engine::general_purpose::STANDARD.encode(v2_header(200_000, 3, 1, HIGHEST_US));
        let e = LatencyHistogram::decode(&plain).unwrap_err();
        assert!(
            e.contains("claims a 200000 byte payload, but 0 bytes follow"),
            "{e}"
        );
        // A claim within what the counters can encode must still be there.
        let e = LatencyHistogram::decode(&compressed(&v2_header(200_000, 3, 1, HIGHEST_US)))
            .unwrap_err();
        assert!(
            e.contains("claims a 200000 byte payload, but 0 bytes inflate"),
            "{e}"
        );
    }

    #[test]
    fn header_ranges_are_checked() {
        let refuse = |sigfig, low, high, why: &str| {
            let e = LatencyHistogram::decode(&compressed(&v2_header(0, sigfig, low, high)))
                .unwrap_err();
            assert!(e.contains(why), "{sigfig} {low} {high}: {e}");
        };
        refuse(6, 1, HIGHEST_US, "6 significant digits, over the 5 limit");
        refuse(3, 0, HIGHEST_US, "trackable range 0..=");
        refuse(3, 10, 15, "trackable range 10..=15");
        refuse(3, 1, u64::MAX, "trackable range 1..=18446744073709551615");
        refuse(5, 1, HIGHEST_US, "counters, over the 524288 limit");
        // In range and empty: decodes.
        let h = LatencyHistogram::decode(&compressed(&v2_header(0, 3, 1, HIGHEST_US))).unwrap();
        assert!(h.is_empty());
        let e = LatencyHistogram::decode(&"A".repeat(MAX_ENCODED_CHARS + 4)).unwrap_err();
        assert!(e.contains("over the 2097152 character limit"), "{e}");
        assert!(LatencyHistogram::decode("").is_err());
    }

    #[test]
    fn real_histograms_still_decode() {
        let mut h = LatencyHistogram::new();
        for i in 0..100_000u64 {
            h.record_us(1 + (i * 7919) % 5_000_000);
        }
        h.record_us(7_200_000_000); // auto-resized past one hour
        let back = LatencyHistogram::decode(&h.encode()).unwrap();
        assert_eq!(back.summary(), h.summary());
        // Uncompressed V2 (what some ports write) too.
        let mut buf = Vec::new();
        hdrhistogram::serialization::V2Serializer::new()
            .serialize(h.inner(), &mut buf)
            .unwrap();
        let plain = base64::engine::general_purpose::STANDARD.encode(buf);
        assert_eq!(
            LatencyHistogram::decode(&plain).unwrap().summary(),
            h.summary()
        );
    }

    #[test]
    fn memory_is_fixed_by_range_not_count() {
        let mut h = LatencyHistogram::new();
        let before = h.inner().distinct_values();
        for i in 0..200_000u64 {
            h.record_us(1 + (i * 7919) % 100_000);
        }
        assert_eq!(h.inner().distinct_values(), before);
    }
}
