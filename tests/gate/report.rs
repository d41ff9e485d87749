//! Renderer tests (issue 4, points 6 and 7): insta snapshots of every renderer
//! on comparisons built directly (no benchmark runs), markdown safety against
//! hostile names, the comment size limit, JSON output against its schema, and
//! reports that read right (issue 28, point 7).

#[path = "report/builder.rs"]
mod builder;
#[path = "report/cases.rs"]
mod cases;
#[path = "report/check.rs"]
mod check;
#[path = "report/drift.rs"]
mod drift;
#[path = "report/exports.rs"]
mod exports;
#[path = "report/markdown.rs"]
mod markdown;
#[path = "report/reads.rs"]
mod reads;
#[path = "report/safety.rs"]
mod safety;
#[path = "report/size.rs"]
mod size;
#[path = "report/terminal.rs"]
mod terminal;
#[path = "report/widths.rs"]
mod widths;
