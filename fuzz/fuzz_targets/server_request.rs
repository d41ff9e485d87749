//! The bytes one plain-HTTP connection sends to the reference server, served
//! through its hyper settings and handler (`server::serve_bytes`): request
//! heads, HTTP/1.1 or h2c, routing, chunked and sized uploads. The reply is
//! an HTTP response or nothing, and the server keeps serving.
#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use benchgate::server::{serve_bytes, Server, ServerOptions};
use libfuzzer_sys::fuzz_target;

/// Short enough that `/delay/{ms}` and `/fault/stall` cost little per input.
const DEADLINE: Duration = Duration::from_millis(50);

fn setup() -> &'static (tokio::runtime::Runtime, Arc<Server>) {
    static SETUP: OnceLock<(tokio::runtime::Runtime, Arc<Server>)> = OnceLock::new();
    SETUP.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let server = Server::new(ServerOptions {
            tls: false,
            max_body_bytes: 64 * 1024,
            ..ServerOptions::default()
        })
        .expect("a server");
        (rt, server)
    })
}

fuzz_target!(|data: &[u8]| {
    let (rt, server) = setup();
    let reply = rt.block_on(serve_bytes(server, data, 1 << 20, DEADLINE));
    let h2 = data.starts_with(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    assert!(
        h2 || reply.is_empty() || reply.starts_with(b"HTTP/1."),
        "{:?}",
        String::from_utf8_lossy(&reply[..reply.len().min(200)])
    );
});
