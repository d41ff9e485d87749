//! Source addresses of a trial's connections: spread over 127.0.0.x when one
//! loopback address pair's ephemeral ports are too few for them.
//!
//! A connection is a 4-tuple (source address and port, destination address
//! and port); against one server port from one source address, every
//! connection takes its own ephemeral port (`net.ipv4.ip_local_port_range`,
//! 32768-60999 by default: 28,232 ports). Long before they run out, connecting
//! slows down: Linux's connect() tries the ports of one parity first (half the
//! range) and, once those are taken, checks them all again on every connect
//! before trying the others. Measured on loopback: with 19,900 connections
//! from 127.0.0.1, connects fell to about 350 per second with a core busy in
//! the kernel, and the 10 s warmup ended before a request was sent.
//!
//! So each source address carries at most a quarter of the port range (half
//! of one parity's ports, the rest left to TIME_WAIT leftovers of earlier
//! trials), and beyond that connection `i` binds 127.0.0.`(i % n) + 1`. The
//! whole of 127.0.0.0/8 is local on Linux, and the reference server listens
//! on 127.0.0.1, so it accepts from every one of them. Bound with
//! `IP_BIND_ADDRESS_NO_PORT` (h1-lean), the port is still chosen at connect
//! time for the whole 4-tuple.

use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};

/// Ephemeral ports when `ip_local_port_range` cannot be read (Linux's default).
const DEFAULT_PORTS: u64 = 60_999 - 32_768 + 1;

/// The source addresses a trial's `connections` connections to `target`
/// bind, in turn; empty: none bound (the kernel picks, 127.0.0.1 on loopback).
pub fn source_addresses(connections: u64, target: IpAddr) -> Vec<IpAddr> {
    spread(connections, target, ephemeral_ports())
}

/// The source address of connection `i`, if it binds one.
pub fn source_of(sources: &[IpAddr], i: usize) -> Option<IpAddr> {
    (!sources.is_empty()).then(|| sources[i % sources.len()])
}

/// A non-blocking TCP socket bound to `source` (its port left to connect
/// time: `IP_BIND_ADDRESS_NO_PORT`), connecting to `to` (`EINPROGRESS` is
/// success: the socket becomes writable when connected). IPv4 only.
pub fn connect_from(source: IpAddr, to: SocketAddr) -> io::Result<TcpStream> {
    use std::os::fd::{AsRawFd as _, FromRawFd as _};
    let (IpAddr::V4(src), SocketAddr::V4(dst)) = (source, to) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot connect from {source} to {to}: IPv4 only"),
        ));
    };
    let sockaddr = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(ip.octets()),
        },
        sin_zero: [0; 8],
    };
    let check = |rc: libc::c_int| {
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: socket(2) returns a new descriptor that the TcpStream owns
    // (and closes on every early return); setsockopt, bind and connect get
    // pointers to values that live across the calls, with their sizes.
    unsafe {
        let fd = libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let stream = TcpStream::from_raw_fd(fd);
        let one: libc::c_int = 1;
        check(libc::setsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ))?;
        let from = sockaddr(src, 0);
        check(libc::bind(
            fd,
            (&from as *const libc::sockaddr_in).cast(),
            len,
        ))?;
        let dest = sockaddr(*dst.ip(), dst.port());
        match check(libc::connect(
            fd,
            (&dest as *const libc::sockaddr_in).cast(),
            len,
        )) {
            Err(e) if e.raw_os_error() != Some(libc::EINPROGRESS) => Err(e),
            _ => Ok(stream),
        }
    }
}

fn spread(connections: u64, target: IpAddr, ports: u64) -> Vec<IpAddr> {
    let per_address = (ports / 4).max(1);
    let needed = connections.div_ceil(per_address);
    let loopback_v4 = matches!(target, IpAddr::V4(v4) if v4.is_loopback());
    if needed <= 1 || !loopback_v4 {
        return vec![];
    }
    // 127.0.0.1 to 127.0.0.254: 63 million connections at least, far beyond
    // any trial's.
    (1..=needed.min(254) as u8)
        .map(|last| IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)))
        .collect()
}

/// Ports in `net.ipv4.ip_local_port_range`.
fn ephemeral_ports() -> u64 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            let mut it = s.split_whitespace().map(|n| n.parse::<u64>().ok());
            let (lo, hi) = (it.next()??, it.next()??);
            (hi >= lo).then_some(hi - lo + 1)
        })
        .unwrap_or(DEFAULT_PORTS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

    fn last_octets(v: &[IpAddr]) -> Vec<u8> {
        v.iter()
            .map(|a| match a {
                IpAddr::V4(v4) => v4.octets()[3],
                IpAddr::V6(_) => panic!("{a}"),
            })
            .collect()
    }

    #[test]
    fn a_quarter_of_the_port_range_per_address() {
        // 28,232 ports: 7,058 per address.
        assert!(spread(7_058, LOOPBACK, DEFAULT_PORTS).is_empty());
        assert_eq!(last_octets(&spread(7_059, LOOPBACK, DEFAULT_PORTS)), [1, 2]);
        assert_eq!(
            last_octets(&spread(20_000, LOOPBACK, DEFAULT_PORTS)),
            [1, 2, 3]
        );
        assert_eq!(spread(50_000, LOOPBACK, DEFAULT_PORTS).len(), 8);
        assert_eq!(spread(50_000, LOOPBACK, 100).len(), 254, "at most .254");
    }

    #[test]
    fn only_towards_ipv4_loopback() {
        assert!(spread(50_000, "10.0.0.1".parse().unwrap(), DEFAULT_PORTS).is_empty());
        assert!(spread(50_000, "::1".parse().unwrap(), DEFAULT_PORTS).is_empty());
        assert_eq!(
            spread(50_000, "127.0.0.1".parse().unwrap(), DEFAULT_PORTS).len(),
            8
        );
    }

    #[test]
    fn connects_from_another_loopback_address() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let to = listener.local_addr().unwrap();
        let from: IpAddr = "127.0.0.3".parse().unwrap();
        let stream = connect_from(from, to).unwrap();
        let (_accepted, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip(), from, "the server sees the source address");
        stream.set_nonblocking(false).unwrap();
        assert_eq!(stream.local_addr().unwrap().ip(), from);
        assert!(connect_from("::1".parse().unwrap(), to).is_err());
    }

    #[test]
    fn connections_take_the_addresses_in_turn() {
        let s = spread(20_000, LOOPBACK, DEFAULT_PORTS);
        let of = |i| source_of(&s, i).map(|a| a.to_string());
        assert_eq!(of(0).as_deref(), Some("127.0.0.1"));
        assert_eq!(of(1).as_deref(), Some("127.0.0.2"));
        assert_eq!(of(3).as_deref(), Some("127.0.0.1"));
        assert_eq!(source_of(&[], 5), None);
        assert!(ephemeral_ports() > 0);
    }
}
