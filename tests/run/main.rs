//! Runs end to end, through the real binary against real servers on
//! loopback: the engine's accuracy and memory, coordinated omission, the
//! built-in, command, example and JMH clients, the harness packages, fault
//! injection, starvation and validity, window markers, captured output,
//! failing drivers, error classes, interrupts, the reference server and
//! servers under test, counterbalanced order, anchors and shards.
//!
//! One test binary per folder of tests/: each module here was a test binary of
//! its own, and cargo links the crate once per binary (docs/development.md).
//! The test command runs every test in a process of its own (cargo-nextest);
//! scripts/test.sh names the serial set, run last, one test at a time. One
//! module alone: `cargo nextest run --test run -E 'test(/^NAME::/)'`.

#[path = "../common/mod.rs"]
mod common;

mod accuracy;
mod anchor;
mod capped_output;
mod client_matrix;
mod closed_pipe;
mod command_clients;
mod command_loop;
mod coordinated_omission;
mod driver_failure;
mod duet;
mod error_classes;
mod example_clients;
mod harness_install;
mod harness_packages;
mod inject_cpu;
mod inject_tail;
mod interleaved;
mod interrupt;
mod jmh_client;
mod lean;
mod leftovers;
mod many_connections;
mod memory;
mod order;
mod run_e2e;
mod server;
mod server_hostile;
mod server_misbehaving;
mod server_under_test;
mod shards;
mod starvation;
mod starved;
mod validity;
mod window_ack;
mod window_edge;
mod window_loop;
