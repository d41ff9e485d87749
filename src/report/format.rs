//! Number formatting shared by the renderers.

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
            if pct < 10.0 {
                format!("±{pct:.1}%")
            } else {
                format!("±{pct:.0}%")
            }
        }
        _ => String::new(),
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
    }
}
