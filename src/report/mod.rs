//! Renderers: results in, bytes out. Where they go is decided by the caller.

pub mod format;
pub mod terminal;
