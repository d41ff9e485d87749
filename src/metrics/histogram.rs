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

    /// Decodes the standard compressed encoding (base64 of V2, with or without DEFLATE).
    pub fn decode(text: &str) -> Result<LatencyHistogram, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("histogram is not valid base64: {e}"))?;
        let mut inner: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram is not a valid HdrHistogram encoding: {e:?}"))?;
        inner.auto(true);
        Ok(LatencyHistogram { inner })
    }
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
