//! The metrics: what one trial measured under stable names ([`TrialMetrics`],
//! [`Spread`] across rounds) and the registry of every metric's facts (unit,
//! direction, scale, default gate, CloudWatch unit, format). Below config, so
//! the gate's settings, the comparison, the renderers and the publishers all
//! read one table.

#[cfg(test)]
#[path = "../../tests/common/measured.rs"]
pub(crate) mod measured;
pub mod registry;
pub mod trial;

#[cfg(test)]
pub(crate) use measured::{every_field_measured, every_jmh_field_measured};
pub use registry::{anchored_twin, metric_def, Direction, Family, MetricDef, Scale, METRICS};
pub use trial::{scale_of, JmhFigures, Spread, TrialMetrics};
