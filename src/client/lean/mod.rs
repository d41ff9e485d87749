//! `h1-lean`'s HTTP/1.1 pieces: the request's bytes built once ([`request`]),
//! one connection's state machine on a mio socket ([`conn`]) and the response
//! parser that counts bodies in place ([`response`]). The load loop that drives
//! them, with the engine's schedule and recorder, is [`crate::engine::lean`].

pub mod conn;
pub mod request;
pub mod response;
