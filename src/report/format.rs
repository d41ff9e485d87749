//! Number formatting shared by the renderers, and a metric's value in the
//! format its registry entry names ([`with_unit`] for comparison rows,
//! [`compact`] for table columns whose header carries the unit).

use crate::metric::metric_def;
use crate::metric::registry::Format;

/// A metric value with its unit: `1.20ms`, `12.5us`, `12.3k req/s`, `3.4MiB`,
/// `0.12%`; a name outside the registry as a plain number.
pub fn with_unit(metric: &str, v: f64) -> String {
    let Some(def) = metric_def(metric) else {
        return si(v);
    };
    match def.format {
        Format::Duration | Format::CpuTime if v < 100.0 => format!("{v:.1}us"),
        Format::Duration | Format::CpuTime => micros(v),
        Format::Millis => micros(v * 1e3),
        Format::Rate => format!("{} {}", si(v), def.unit),
        Format::ByteRate => format!("{}/s", bytes(v)),
        Format::Bytes => bytes(v),
        Format::Count => format!("{v:.0}"),
        Format::Percent => percent(v),
        Format::Ratio => si(v),
        Format::Anchored => format!("{v:.3}x"),
        Format::OpsRate => format!("{} {}", si(v), def.unit),
        Format::TimePerOp => format!("{}/op", nanos(v)),
        Format::BytesPerOp => format!("{v:.0}B/op"),
    }
}

/// A metric value in a table column: `1.20ms`, `12.5us`, `12.3k`, `3.4MiB`,
/// `17`, `0.12%`, `12.5`; a name outside the registry as a plain number.
pub fn compact(metric: &str, v: f64) -> String {
    let Some(def) = metric_def(metric) else {
        return si(v);
    };
    match def.format {
        Format::Duration => micros(v),
        Format::CpuTime => format!("{v:.1}us"),
        Format::Millis => micros(v * 1e3),
        Format::Rate => si(v),
        Format::ByteRate => format!("{}/s", bytes(v)),
        Format::Bytes => bytes(v),
        Format::Count => format!("{v:.0}"),
        Format::Percent => percent(v),
        Format::Ratio => format!("{v:.1}"),
        Format::Anchored => format!("{v:.3}x"),
        Format::OpsRate => si(v),
        Format::TimePerOp => nanos(v),
        Format::BytesPerOp => format!("{v:.0}B"),
    }
}

/// Nanoseconds as a readable duration with three significant digits:
/// `8.88ns`, `85.2ns`, `8.88us`, `1.20ms`, `3.71s`.
pub fn nanos(ns: f64) -> String {
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    if v >= 100.0 {
        format!("{v:.0}{unit}")
    } else if v >= 10.0 {
        format!("{v:.1}{unit}")
    } else {
        format!("{v:.2}{unit}")
    }
}

/// A ratio as a percentage: `0.12%`.
fn percent(v: f64) -> String {
    format!("{:.2}%", v * 100.0)
}

/// A count or rate with a k/M suffix: `950`, `12.3k`, `4.56M`.
pub fn si(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Microseconds as a readable duration: `850us`, `10.1ms`, `1.20s`.
pub fn micros(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2}s", us / 1e6)
    } else if us >= 1e4 {
        format!("{:.1}ms", us / 1e3)
    } else if us >= 1e3 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{us:.0}us")
    }
}

/// Bytes in binary units: `512B`, `12.0KiB`, `3.4MiB`.
pub fn bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b >= K * K * K {
        format!("{:.1}GiB", b / (K * K * K))
    } else if b >= K * K {
        format!("{:.1}MiB", b / (K * K))
    } else if b >= K {
        format!("{:.1}KiB", b / K)
    } else {
        format!("{b:.0}B")
    }
}

/// Relative half-range as `±3%`, empty for a single value.
pub fn spread_pct(half_range: Option<f64>, n: u32) -> String {
    match half_range {
        Some(r) if n > 1 => {
            let pct = r * 100.0;
            if pct > 999.0 {
                // Past this the figure is noise; the digits would only widen the table.
                "±>999%".to_string()
            } else if pct < 10.0 {
                format!("±{pct:.1}%")
            } else {
                format!("±{pct:.0}%")
            }
        }
        _ => String::new(),
    }
}

/// A span of seconds in words, two units at most: `45 s`, `3 min`, `2 h 5 min`, `3 d 4 h`.
pub fn duration_words(secs: i64) -> String {
    let s = secs.abs();
    let (d, h, m) = (s / 86_400, s / 3600 % 24, s / 60 % 60);
    if d > 0 {
        if h > 0 {
            format!("{d} d {h} h")
        } else {
            format!("{d} d")
        }
    } else if h > 0 {
        if m > 0 {
            format!("{h} h {m} min")
        } else {
            format!("{h} h")
        }
    } else if m > 0 {
        format!("{m} min")
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(si(950.0), "950");
        assert_eq!(si(12_345.0), "12.3k");
        assert_eq!(si(4_560_000.0), "4.56M");
        assert_eq!(si(4.567), "4.57");
        assert_eq!(micros(850.0), "850us");
        assert_eq!(micros(10_100.0), "10.1ms");
        assert_eq!(micros(1_234.0), "1.23ms");
        assert_eq!(micros(1_200_000.0), "1.20s");
        assert_eq!(bytes(512.0), "512B");
        assert_eq!(bytes(3.5 * 1024.0 * 1024.0), "3.5MiB");
        assert_eq!(spread_pct(Some(0.031), 3), "±3.1%");
        assert_eq!(spread_pct(Some(0.25), 3), "±25%");
        assert_eq!(spread_pct(Some(0.25), 1), "");
        assert_eq!(duration_words(45), "45 s");
        assert_eq!(duration_words(7_500), "2 h 5 min");
        assert_eq!(duration_words(3 * 86_400 + 4 * 3600 + 60), "3 d 4 h");
    }

    /// The texts each metric had before the registry named its format: the
    /// comparison rows' (`with_unit`) and the table columns' (`compact`).
    #[test]
    fn metric_texts() {
        let cases: &[(&str, f64, &str, &str)] = &[
            ("throughput_rps", 12_345.0, "12.3k req/s", "12.3k"),
            (
                "bytes_per_sec",
                3.5 * 1024.0 * 1024.0,
                "3.5MiB/s",
                "3.5MiB/s",
            ),
            ("latency_p50_us", 850.0, "850us", "850us"),
            ("latency_p99_us", 42.5, "42.5us", "42us"),
            ("latency_max_us", 1_234.0, "1.23ms", "1.23ms"),
            ("error_rate", 0.0012, "0.12%", "0.12%"),
            ("errors.status_5xx", 3.0, "3", "3"),
            ("cpu_us_per_request", 12.5, "12.5us", "12.5us"),
            ("cpu_us_per_request", 150.0, "150us", "150.0us"),
            ("server_cpu_us_per_request", 12.5, "12.5us", "12.5us"),
            ("startup_ms", 45.2, "45.2ms", "45.2ms"),
            ("startup_cpu_ms", 1234.0, "1.23s", "1.23s"),
            ("peak_rss_bytes", 512.0, "512B", "512B"),
            ("server_peak_rss_bytes", 512.0, "512B", "512B"),
            ("peak_threads", 17.0, "17", "17"),
            ("server_peak_threads", 17.0, "17", "17"),
            ("connections_opened", 16.0, "16", "16"),
            ("requests_per_connection", 12.5, "12.5", "12.5"),
            ("requests_per_connection", 1_250.0, "1250", "1250.0"),
            ("not_a_metric", 4.567, "4.57", "4.57"),
        ];
        for (metric, v, row, column) in cases {
            assert_eq!(with_unit(metric, *v), *row, "{metric}");
            assert_eq!(compact(metric, *v), *column, "{metric}");
        }
    }
}
