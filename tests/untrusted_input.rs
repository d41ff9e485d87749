//! Untrusted results files and histograms are bounded before they are parsed
//! and decoded (issue 17, point 3). A counting global allocator measures what
//! a crafted histogram header makes the decoder allocate; the tests of this
//! binary run one at a time so that the count is this decode's alone.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use benchgate::measure::LatencyHistogram;
use benchgate::results::{check, RunResults};

/// The shared fixture (tests/common/synthetic.rs), of which this binary uses a part.
#[allow(dead_code)]
#[path = "common/synthetic.rs"]
mod synthetic;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(live, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// One test at a time: the allocation counts are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

/// Peak bytes allocated above the starting level while `f` runs.
fn peak_extra<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.load(Ordering::SeqCst);
    PEAK.store(start, Ordering::SeqCst);
    let out = f();
    (out, PEAK.load(Ordering::SeqCst).saturating_sub(start))
}

/// base64 of HdrHistogram's compressed V2 encoding whose header claims
/// `payload_len` payload bytes (3 digits, 1 µs to 1 h, as benchgate records)
/// and carries none.
fn crafted(payload_len: u32) -> String {
    let mut v2 = (0x1c84_9303u32 | 0x10).to_be_bytes().to_vec();
    v2.extend(payload_len.to_be_bytes());
    v2.extend(0u32.to_be_bytes()); // normalizing offset
    v2.extend(3u32.to_be_bytes()); // significant digits
    v2.extend(1u64.to_be_bytes()); // lowest
    v2.extend(3_600_000_000u64.to_be_bytes()); // highest
    v2.extend(1.0f64.to_bits().to_be_bytes()); // conversion ratio
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&v2).unwrap();
    let z = z.finish().unwrap();
    let mut blob = (0x1c84_9304u32 | 0x10).to_be_bytes().to_vec();
    blob.extend((z.len() as u32).to_be_bytes());
    blob.extend(z);
    base64::engine::general_purpose::STANDARD.encode(blob)
}

#[test]
fn a_histogram_header_claiming_4_gib_allocates_almost_nothing() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let text = crafted(u32::MAX);
    let (result, peak) = peak_extra(|| LatencyHistogram::decode(&text).map(|_| ()));
    let e = result.unwrap_err();
    assert!(e.contains("not a benchgate histogram"), "{e}");
    assert!(
        e.contains("claims a 4294967295 byte payload, more than 23552 counters can encode"),
        "{e}"
    );
    assert!(peak < 1 << 20, "decoding allocated {peak} bytes at peak");
    // The largest claim the header's counters allow, with no payload behind it.
    let text = crafted(200_000);
    let (result, peak) = peak_extra(|| LatencyHistogram::decode(&text).map(|_| ()));
    let e = result.unwrap_err();
    assert!(e.contains("but 0 bytes inflate"), "{e}");
    assert!(peak < 1 << 20, "decoding allocated {peak} bytes at peak");
}

#[test]
fn a_recorded_histogram_decodes_within_bounds() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut h = LatencyHistogram::new();
    for i in 0..50_000u64 {
        h.record(Duration::from_micros(50 + (i * 7919) % 2_000_000));
    }
    let text = h.encode();
    let (back, peak) = peak_extra(|| LatencyHistogram::decode(&text).unwrap());
    assert_eq!(back.summary(), h.summary());
    // The counters of 3 digits over 1 µs..1 h (~190 KiB) and the payload.
    assert!(peak < 1 << 20, "decoding allocated {peak} bytes at peak");
}

fn results_json(r: &RunResults) -> serde_json::Value {
    serde_json::to_value(r).unwrap()
}

fn small_run() -> RunResults {
    synthetic::run(benchgate::config::Suite::default_suite(), 2, |_, _, _| {
        Some(synthetic::metrics(100.0, 50.0, 10.0))
    })
}

/// The scan refuses it before serde builds a cell: what the refusal
/// allocates at peak is the scanner's frames and the error, not the cells
/// (some 20 MB built). Its time is the scan's, linear in the file (not
/// timed here: the machine is shared; `compare` on such a file is timed by
/// scripts/results-scale.py).
#[test]
fn a_results_file_with_100k_cells_is_refused_before_its_cells_are_built() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut doc = results_json(&small_run());
    // Small cells, as a crafted file would have them (~10 MB in all).
    let cell = serde_json::json!({
        "scenario": "s", "client": "c", "trials": [], "summary": {},
        "histogram": null, "histogram_uncorrected": null,
    });
    doc["results"] = serde_json::Value::Array(vec![cell; 100_000]);
    let text = doc.to_string();
    let (result, peak) = peak_extra(|| RunResults::parse_bytes(text.as_bytes(), "fork.json"));
    let e = result.unwrap_err().to_string();
    assert!(
        e.starts_with("fork.json: results has 100000 cells, over the limit of 10000"),
        "{e}"
    );
    assert!(peak < 1 << 20, "refusing allocated {peak} bytes at peak");
    assert_eq!(check::MAX_CELLS, 10_000);
}

#[test]
fn too_many_trials_are_refused() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut doc = results_json(&small_run());
    let trial = doc["results"][1]["trials"][0].clone();
    doc["results"][1]["trials"] = serde_json::Value::Array(vec![trial; 1_001]);
    let e = RunResults::parse_bytes(doc.to_string().as_bytes(), "fork.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("fork.json: results[1].trials has 1001 trials, over the limit of 1000"),
        "{e}"
    );
}

#[test]
fn a_megabyte_name_is_refused_before_it_is_copied() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let big = "x".repeat(1 << 20);
    let base = results_json(&small_run());
    // A cell name.
    let mut doc = base.clone();
    doc["results"][0]["client"] = big.clone().into();
    let text = doc.to_string();
    let (result, peak) = peak_extra(|| RunResults::parse_bytes(text.as_bytes(), "fork.json"));
    let e = result.unwrap_err().to_string();
    assert!(
        e.starts_with("fork.json: results[0].client has 1048576 bytes, over the limit of 256"),
        "{e}"
    );
    // Refused by the scan, before the name is copied out of the file.
    assert!(peak < 64 << 10, "refusing allocated {peak} bytes at peak");
    // A metric key (summary names are free-form keys).
    let mut doc = base.clone();
    doc["results"][0]["summary"][big.as_str()] = doc["results"][0]["summary"]["rps"].clone();
    let e = RunResults::parse_bytes(doc.to_string().as_bytes(), "fork.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("fork.json: the key starting \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" has 1048576 bytes, over the limit of 256"),
        "{e}"
    );
    // At the limit: accepted.
    let mut doc = base;
    doc["results"][0]["scenario"] = "s".repeat(check::MAX_NAME_BYTES).into();
    RunResults::parse_bytes(doc.to_string().as_bytes(), "fork.json").unwrap();
}

/// Asserts that the scanner's estimate for `bytes` under `limits` covers
/// the peak of what `read` allocates, whether it reads the file or refuses
/// it after the scan (issue 53): the documented bound, twice the file's size
/// plus the allowance, holds only if it does. `None`: the scan refused it.
fn estimate_covers<T>(
    what: &str,
    bytes: &[u8],
    limits: &benchgate::files::json::Limits,
    read: impl FnOnce() -> anyhow::Result<T>,
) -> Option<anyhow::Result<T>> {
    use benchgate::files::json::{estimate, Breach};
    let estimate = match estimate(bytes, limits) {
        Ok(n) => n,
        Err(Breach::Memory { .. }) => return None,
        Err(e) => panic!("{what}: refused by the scan, but not for its memory: {e}"),
    };
    let (result, peak) = peak_extra(read);
    eprintln!(
        "{what}: {} bytes, estimate {estimate}, peak {peak}, {}",
        bytes.len(),
        match &result {
            Ok(_) => "read".to_string(),
            Err(e) => format!("refused: {e:#}").chars().take(120).collect(),
        }
    );
    assert!(
        peak as u64 <= estimate,
        "{what}: reading a {} byte file allocated {peak} bytes at peak, over the estimate of {estimate}",
        bytes.len()
    );
    Some(result)
}

/// `n` JMH entries of `mode` with `metric` as their primary metric's raw data.
fn jmh_file(n: usize, mode: &str, unit: &str, metric: serde_json::Value) -> Vec<u8> {
    let mut primary = serde_json::json!({ "score": 1.0, "scoreUnit": unit });
    primary
        .as_object_mut()
        .unwrap()
        .extend(metric.as_object().unwrap().clone());
    let entries: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "benchmark": format!("org.example.Bench.m{i}"), "mode": mode,
                "params": { "size": "10" }, "primaryMetric": primary,
            })
        })
        .collect();
    serde_json::to_vec(&entries).unwrap()
}

#[test]
fn the_estimate_covers_what_jmh_entries_become() {
    use benchgate::results::jmh::{self, TrialUnit};
    use benchgate::results::jmh_limits::limits;
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Small entries (each a cell, each fork or iteration a trial), and
    // SampleTime histograms of a few hundred pairs.
    let iterations: Vec<f64> = (0..5).map(|i| 1.0 + i as f64 / 10.0).collect();
    let pairs: Vec<(f64, u64)> = (0..300).map(|i| (1.0 + i as f64, 3)).collect();
    let files = [
        (
            "avgt",
            jmh_file(
                3_000,
                "avgt",
                "us/op",
                serde_json::json!({ "rawData": vec![iterations.clone(); 4] }),
            ),
        ),
        (
            "sample",
            jmh_file(
                300,
                "sample",
                "us/op",
                serde_json::json!({ "rawDataHistogram": vec![vec![pairs.clone(); 3]; 2] }),
            ),
        ),
    ];
    for (what, bytes) in &files {
        for unit in [TrialUnit::Forks, TrialUnit::Iterations] {
            estimate_covers(&format!("{what} {unit:?}"), bytes, &limits(unit), || {
                jmh::parse(bytes, "many.json", unit)
            })
            .expect("refused by the estimate")
            .unwrap();
        }
    }
}

/// A results file of `clients` command clients with `vars` `env` entries each.
fn env_file(clients: usize, vars: usize) -> Vec<u8> {
    let run = small_run();
    let mut doc = results_json(&run);
    let env: serde_json::Map<String, serde_json::Value> = (0..vars)
        .map(|i| (format!("VAR_{i:05}"), serde_json::Value::from("x")))
        .collect();
    let client = serde_json::json!({
        "name": "c", "pool": null, "http": "http1", "tls": false,
        "kind": { "command": { "command": ["true"], "setup": null, "cwd": ".", "env": env, "timeout": null } },
    });
    doc["config"]["clients"] = (0..clients)
        .map(|i| {
            let mut c = client.clone();
            c["name"] = format!("c{i}").into();
            c
        })
        .collect();
    serde_json::to_vec(&doc).unwrap()
}

/// Issue 53, point 4: the scanner counted an object's members as nothing
/// in results files and never counted keys, so maps took memory the
/// estimate never saw (200 command clients with 10,000 `env` entries each,
/// 24 MB, took 497 MB to compare; 5.5 M JMH `secondaryMetrics` entries, 65
/// MB, 768 MB). The shapes of the issue at a few MB: what reading them
/// allocates stays within the estimate, or the scan refuses them.
#[test]
fn the_estimate_covers_map_entries_and_their_keys() {
    use benchgate::results::jmh::{self, TrialUnit};
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // `env` maps of command clients (and servers) in the resolved config.
    let bytes = env_file(200, 500);
    let run = estimate_covers("200 clients x 500 env", &bytes, &check::LIMITS, || {
        RunResults::parse_bytes(&bytes, "env.json")
    })
    .expect("refused by the estimate")
    .unwrap();
    assert_eq!(run.config.clients.len(), 200);
    // Members serde buffers before it reads them: a scenario's load is an
    // internally tagged enum (`model`).
    let mut doc = results_json(&small_run());
    let load = &mut doc["config"]["scenarios"][0]["load"];
    for i in 0..9_990 {
        load[format!("unknown_{i:05}")] = 0.into();
    }
    let bytes = serde_json::to_vec(&doc).unwrap();
    estimate_covers("a load of 9,992 members", &bytes, &check::LIMITS, || {
        RunResults::parse_bytes(&bytes, "load.json")
    });
    // JMH secondary metrics: 100 entries of 2,000 each.
    let secondary: serde_json::Map<String, serde_json::Value> = (0..2_000)
        .map(|i| (format!("jdbc.metric.{i:05}"), serde_json::Value::from(0)))
        .collect();
    let entries: Vec<serde_json::Value> = (0..100)
        .map(|i| {
            serde_json::json!({
                "benchmark": format!("org.example.Bench.m{i}"), "mode": "avgt", "params": {},
                "primaryMetric": { "score": 1.0, "scoreUnit": "us/op", "rawData": [[1.0]] },
                "secondaryMetrics": secondary,
            })
        })
        .collect();
    let bytes = serde_json::to_vec(&entries).unwrap();
    for unit in [TrialUnit::Forks, TrialUnit::Iterations] {
        let limits = benchgate::results::jmh_limits::limits(unit);
        estimate_covers("JMH secondaryMetrics", &bytes, &limits, || {
            jmh::parse(&bytes, "jmh.json", unit)
        })
        .expect("refused by the estimate")
        .unwrap();
    }
}
