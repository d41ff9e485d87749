/*
 * The server floor of scripts/bench-engine.sh: the least a single-threaded
 * HTTP/1.1 keep-alive server can do per request on this kernel, to set the
 * reference server's and nginx's CPU per request against.
 *
 * One thread, one edge-triggered epoll set, non-blocking sockets. Every
 * request on a connection gets the same response, prepared once (argv: the
 * body and its content type); a read shorter than the buffer is taken as the
 * socket drained (no extra read that returns EAGAIN); pipelined requests are
 * answered in one write. No parsing beyond finding each request's end (the
 * empty line): requests must have no body, which is all wrk -c16 GET sends.
 * It is a floor, not a server: it counts nothing and routes nothing.
 *
 * Usage: floor_server PORT BODY CONTENT_TYPE   (listens on 127.0.0.1:PORT)
 * Build: cc -O2 -o floor_server floor_server.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { BUF = 16384, MAX_PIPELINED = 64, MAX_EVENTS = 256 };

struct conn {
    int fd;
    int tail; /* bytes of "\r\n\r\n" matched at the end of the last read */
};

static char response[1024];
static size_t response_len;
static char out[MAX_PIPELINED * 1024];

static void die(const char *what) {
    perror(what);
    exit(2);
}

/* Requests completed in buf[0..n), carrying the partial match across reads. */
static int count_requests(const char *buf, ssize_t n, int *tail) {
    static const char end[] = "\r\n\r\n";
    int done = 0, t = *tail;
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == end[t]) {
            if (++t == 4) {
                done++;
                t = 0;
            }
        } else {
            t = buf[i] == '\r' ? 1 : 0;
        }
    }
    *tail = t;
    return done;
}

static void close_conn(int ep, struct conn *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c);
}

/* Reads what the socket holds and answers every completed request. */
static void serve(int ep, struct conn *c) {
    static char buf[BUF];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            close_conn(ep, c);
            return;
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            return; /* EAGAIN: drained */
        }
        int k = count_requests(buf, n, &c->tail);
        while (k > 0) {
            int batch = k < MAX_PIPELINED ? k : MAX_PIPELINED;
            for (int i = 0; i < batch; i++) memcpy(out + i * response_len, response, response_len);
            size_t len = batch * response_len, sent = 0;
            while (sent < len) {
                ssize_t w = write(c->fd, out + sent, len - sent);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) {
                    /* A client that stops reading is not what a floor measures. */
                    close_conn(ep, c);
                    return;
                }
                sent += (size_t)w;
            }
            k -= batch;
        }
        if (n < (ssize_t)sizeof buf) return; /* short read: drained (epoll ET re-arms) */
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s PORT BODY CONTENT_TYPE\n", argv[0]);
        return 2;
    }
    const char *body = argv[2];
    int len = snprintf(response, sizeof response,
                       "HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %zu\r\n\r\n%s", argv[3],
                       strlen(body), body);
    if (len < 0 || (size_t)len >= sizeof response) {
        fprintf(stderr, "the body is too long for a floor server\n");
        return 2;
    }
    response_len = (size_t)len;

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (lfd < 0) die("socket");
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1]))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
    if (listen(lfd, 1024) < 0) die("listen");
    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) < 0) die("epoll_ctl");

    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int n = epoll_wait(ep, events, MAX_EVENTS, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("epoll_wait");
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (c != NULL) {
                serve(ep, c);
                continue;
            }
            for (;;) {
                int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
                if (fd < 0) break;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct conn *nc = calloc(1, sizeof *nc);
                if (nc == NULL) die("calloc");
                nc->fd = fd;
                struct epoll_event cev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP, .data.ptr = nc};
                if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev) < 0) die("epoll_ctl");
            }
        }
    }
}
