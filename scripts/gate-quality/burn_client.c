/*
 * The command client of scripts/gate-quality-base.sh: a small HTTP/1.1
 * keep-alive GET client speaking benchgate's command-client protocol
 * (docs/external-clients.md): BENCHGATE_CONCURRENCY threads, one connection
 * each, a closed loop; warmup, then the window between BENCHGATE-WINDOW-OPEN
 * and BENCHGATE-WINDOW-CLOSE with the stdin acknowledgements; a result file
 * with every measured latency (`latency_us`).
 *
 * Its committed setting: the file `burn_ns` in its working directory (a
 * whole number of nanoseconds, default 0): before each request the thread
 * spins that much of its own CPU time (CLOCK_THREAD_CPUTIME_ID), so a commit
 * that changes the file changes the client's CPU per request by a known
 * amount: the "regression" that base vs head must catch.
 *
 * Closed loop over plain HTTP/1.1 with a duration only; anything else exits 3.
 * Build: cc -O2 -pthread -o client burn_client.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { WARMUP = 0, COUNTING = 1, STOPPED = 2 };
static atomic_int phase = WARMUP;
static long long burn_ns;
static struct sockaddr_in addr;
static char request[1024];
static size_t request_len;

struct worker {
    pthread_t thread;
    uint64_t *lat; /* µs of each measured success */
    size_t n, cap;
    uint64_t requests, ok, status_4xx, status_5xx, read_err, write_err, connect_err;
};

static void die(int code, const char *msg) {
    fprintf(stderr, "burn_client: %s\n", msg);
    exit(code);
}

static const char *env(const char *name) {
    const char *v = getenv(name);
    if (!v) {
        fprintf(stderr, "burn_client: %s is not set\n", name);
        exit(2);
    }
    return v;
}

static uint64_t now_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void burn(void) {
    if (burn_ns <= 0) return;
    uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)burn_ns;
    while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end) {
    }
}

static int connect_once(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One response on fd: 0 and its status, or -1 (read error / closed). */
static int read_response(int fd, char *buf, size_t cap, int *status) {
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == cap) return -1;
        ssize_t r = read(fd, buf + have, cap - have);
        if (r <= 0) return -1;
        have += (size_t)r;
        end = memmem(buf, have, "\r\n\r\n", 4);
    }
    size_t head = (size_t)(end - buf) + 4;
    if (have < 12 || strncmp(buf, "HTTP/1.1 ", 9) != 0) return -1;
    *status = atoi(buf + 9);
    long long length = -1;
    for (char *line = memmem(buf, head, "\r\n", 2); line && line < end; line = memmem(line + 2, head - (size_t)(line + 2 - buf), "\r\n", 2)) {
        if (strncasecmp(line + 2, "content-length:", 15) == 0) length = atoll(line + 17);
    }
    if (length < 0) return -1; /* the reference server always sends it */
    long long body = (long long)(have - head);
    while (body < length) {
        ssize_t r = read(fd, buf, cap);
        if (r <= 0) return -1;
        body += r;
    }
    return body == length ? 0 : -1;
}

static void *work(void *arg) {
    struct worker *w = arg;
    char buf[65536];
    int fd = -1;
    while (atomic_load(&phase) != STOPPED) {
        if (fd < 0 && (fd = connect_once()) < 0) {
            if (atomic_load(&phase) == COUNTING) w->connect_err++, w->requests++;
            usleep(1000);
            continue;
        }
        burn();
        uint64_t t0 = now_ns(CLOCK_MONOTONIC);
        int status = 0, failed_write = write(fd, request, request_len) != (ssize_t)request_len;
        int failed_read = !failed_write && read_response(fd, buf, sizeof buf, &status) != 0;
        uint64_t t1 = now_ns(CLOCK_MONOTONIC);
        int counting = atomic_load(&phase) == COUNTING;
        if (failed_write || failed_read) {
            close(fd);
            fd = -1;
        }
        if (!counting) continue;
        w->requests++;
        if (failed_write) w->write_err++;
        else if (failed_read) w->read_err++;
        else if (status >= 500) w->status_5xx++;
        else if (status >= 400) w->status_4xx++;
        else {
            if (w->n == w->cap) {
                w->cap = w->cap ? 2 * w->cap : 4096;
                w->lat = realloc(w->lat, w->cap * sizeof *w->lat);
                if (!w->lat) die(1, "out of memory");
            }
            w->lat[w->n++] = (t1 - t0) / 1000;
            w->ok++;
        }
    }
    if (fd >= 0) close(fd);
    return NULL;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* Print a window marker; with BENCHGATE_WINDOW_ACK=stdin wait for benchgate's answer. */
static void marker(const char *line, int ack) {
    printf("%s\n", line);
    fflush(stdout);
    char answer[128];
    if (ack && !fgets(answer, sizeof answer, stdin)) die(1, "stdin closed before the window acknowledgement");
}

int main(void) {
    if (strcmp(env("BENCHGATE_RATE"), "0") != 0) die(3, "open loop is not supported");
    if (strcmp(env("BENCHGATE_TLS"), "0") != 0) die(3, "TLS is not supported");
    if (strcmp(env("BENCHGATE_HTTP_VERSION"), "1.1") != 0) die(3, "only HTTP/1.1 is supported");
    if (strcmp(env("BENCHGATE_METHOD"), "GET") != 0) die(3, "only GET is supported");
    if (atoll(env("BENCHGATE_REQUESTS")) != 0) die(3, "a request count is not supported, only a duration");
    int conc = atoi(env("BENCHGATE_CONCURRENCY"));
    long warmup = atol(env("BENCHGATE_WARMUP_MS")), duration = atol(env("BENCHGATE_DURATION_MS"));
    const char *base = env("BENCHGATE_BASE_URL"), *path = env("BENCHGATE_PATH"), *out = env("BENCHGATE_RESULT_PATH");
    const char *ack_env = getenv("BENCHGATE_WINDOW_ACK");
    int ack = ack_env && strcmp(ack_env, "stdin") == 0;
    char host[64];
    int port;
    if (conc < 1 || conc > 1024 || sscanf(base, "http://%63[0-9.]:%d", host, &port) != 2) die(2, "BENCHGATE_BASE_URL must be http://IPv4:PORT and BENCHGATE_CONCURRENCY 1..1024");
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) die(2, "bad host in BENCHGATE_BASE_URL");
    request_len = (size_t)snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", path, host, port);
    FILE *setting = fopen("burn_ns", "r");
    if (setting) {
        if (fscanf(setting, "%lld", &burn_ns) != 1 || burn_ns < 0) die(2, "burn_ns must hold a whole number of nanoseconds");
        fclose(setting);
    }

    struct worker *ws = calloc((size_t)conc, sizeof *ws);
    for (int i = 0; i < conc; i++) pthread_create(&ws[i].thread, NULL, work, &ws[i]);
    sleep_ms(warmup);
    marker("BENCHGATE-WINDOW-OPEN", ack);
    atomic_store(&phase, COUNTING);
    uint64_t open_ns = now_ns(CLOCK_MONOTONIC);
    sleep_ms(duration);
    marker("BENCHGATE-WINDOW-CLOSE", ack);
    atomic_store(&phase, STOPPED);
    uint64_t close_ns = now_ns(CLOCK_MONOTONIC);
    for (int i = 0; i < conc; i++) pthread_join(ws[i].thread, NULL);

    struct worker sum = {0};
    for (int i = 0; i < conc; i++) {
        sum.requests += ws[i].requests, sum.ok += ws[i].ok, sum.status_4xx += ws[i].status_4xx;
        sum.status_5xx += ws[i].status_5xx, sum.read_err += ws[i].read_err;
        sum.write_err += ws[i].write_err, sum.connect_err += ws[i].connect_err;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    if (!f) die(1, "cannot write the result file");
    fprintf(f, "{\"benchgate_result\": 1, \"requests\": %llu, \"ok\": %llu, \"elapsed_s\": %.9f,\n",
            (unsigned long long)sum.requests, (unsigned long long)sum.ok, (double)(close_ns - open_ns) / 1e9);
    fprintf(f, " \"errors\": {\"connect\": %llu, \"read\": %llu, \"write\": %llu, \"status_4xx\": %llu, \"status_5xx\": %llu},\n \"latency_us\": [",
            (unsigned long long)sum.connect_err, (unsigned long long)sum.read_err, (unsigned long long)sum.write_err,
            (unsigned long long)sum.status_4xx, (unsigned long long)sum.status_5xx);
    const char *sep = "";
    for (int i = 0; i < conc; i++)
        for (size_t j = 0; j < ws[i].n; j++, sep = ",") fprintf(f, "%s%llu", sep, (unsigned long long)ws[i].lat[j]);
    fprintf(f, "]}\n");
    if (fclose(f) != 0 || rename(tmp, out) != 0) die(1, "cannot write the result file");
    return sum.ok > 0 ? 0 : 1;
}
