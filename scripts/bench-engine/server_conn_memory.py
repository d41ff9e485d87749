#!/usr/bin/env python3
"""The reference server's memory per open keep-alive connection, lean loop
against `--hyper-only`: starts `benchgate serve` (loopback, port 0), opens N
connections that each send one `GET /bytes/22` and read its answer, and
compares the server's RSS (/proc/PID/status VmRSS) before and after; twice
each, interleaved. Bounded: N connections on 127.0.0.1, then everything closes.

Usage: scripts/bench-engine/server_conn_memory.py BENCHGATE N
(N + 100 must fit the hard open-file limit; the soft one is raised to it.)
"""
import resource, socket, subprocess, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
N = int(sys.argv[2])
def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
def run(extra):
    p = subprocess.Popen([sys.argv[1], "serve", "--listen", "127.0.0.1:0", "--no-tls", "--exit-on-stdin-eof"] + extra,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    url = p.stdout.readline().decode().strip()
    host, port = url.split("//")[1].split(":")
    # one warm-up connection so the allocator and runtime are up
    s0 = socket.create_connection((host, int(port))); s0.sendall(b"GET /bytes/22 HTTP/1.1\r\nHost: x\r\n\r\n"); s0.recv(4096)
    time.sleep(0.3)
    before = rss(p.pid)
    socks = []
    for i in range(N):
        s = socket.create_connection((host, int(port)))
        s.sendall(b"GET /bytes/22 HTTP/1.1\r\nHost: x\r\n\r\n")
        socks.append(s)
    for s in socks:
        got = b""
        while not got.endswith(b"0123456789abcdefghijkl"):
            got += s.recv(4096)
    time.sleep(0.5)
    after = rss(p.pid)
    print(f"{' '.join(extra) or 'lean (default)'}: RSS before {before/2**20:.1f} MiB, with {N} open keep-alive connections {after/2**20:.1f} MiB: {(after-before)/N:.0f} bytes per connection")
    for s in socks: s.close()
    p.stdin.close(); p.wait(timeout=10)
for extra in ([], ["--hyper-only"], [], ["--hyper-only"]):
    run(extra)
