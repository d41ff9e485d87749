//! Integration tests of the reference server through real HTTP clients and raw
//! sockets. Every server binds 127.0.0.1:0; every test is bounded in time.

#[path = "server/counters.rs"]
mod counters;
#[path = "server/endpoints.rs"]
mod endpoints;
#[path = "server/faults.rs"]
mod faults;
#[path = "server/lean.rs"]
mod lean;
#[path = "server/limits.rs"]
mod limits;
#[path = "server/support.rs"]
pub mod support;
