/* hostile_prom: a Prometheus that answers badly on purpose, for tests (127.0.0.1 only).
 *
 *   hostile_prom --port-file FILE [--node NAME]...
 *
 * The first segment of the request path picks the answer to <prefix>/api/v1/query:
 *   good       a valid instant vector: the first --node at 80 % CPU pressure, the others at 1 %
 *   huge       a vector of tiny series that never ends (up to 4 GiB, until the client hangs up)
 *   many       a complete, valid vector of 31 MiB of tiny series (about a million)
 *   slow       a valid start, then a byte every 200 ms
 *   garbage    1 MiB of pseudo-random bytes as a 200 reply
 *   truncated  a Content-Length of 16 MiB and 4 MiB of a valid vector, then the connection closes
 *   deep       a vector whose first label value is 100,000 nested arrays
 * Each connection is served by its own child process; each request is logged on stdout when it
 * came ("asked MODE") and when its answer ended, with the bytes written ("served MODE bytes=N"). */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ENVELOPE "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
#define TINY "{\"metric\":{},\"value\":[1,\"0\"]},"
#define LAST "{\"metric\":{},\"value\":[1,\"0\"]}]}}"

static const char **nodes;
static int nnodes;
static unsigned long long sent;

/* Write all of buf; 0, or -1 once the client is gone. */
static int put(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
        sent += (unsigned long long)w;
    }
    return 0;
}

static int head(int fd, const char *extra)
{
    char h[256];
    int n = snprintf(h, sizeof(h), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n%s\r\n",
                     extra ? extra : "");
    return put(fd, h, (size_t)n);
}

/* Tiny series, total bytes of them at most (0: for ever), in 64 KiB writes. */
static int tiny_series(int fd, unsigned long long total)
{
    static char block[65536];
    size_t one = strlen(TINY), per = sizeof(block) / one;
    for (size_t i = 0; i < per; i++)
        memcpy(block + i * one, TINY, one);
    for (unsigned long long done = 0; !total || done + per * one <= total; done += per * one)
        if (put(fd, block, per * one) < 0)
            return -1;
    return 0;
}

static void answer_good(int fd)
{
    char body[65536];
    size_t o = (size_t)snprintf(body, sizeof(body), "%s", ENVELOPE);
    for (int i = 0; i < nnodes && o < sizeof(body) - 256; i++)
        o += (size_t)snprintf(body + o, sizeof(body) - o,
                              "%s{\"metric\":{\"instance\":\"%s\",\"psi_resource\":\"cpu\"},\"value\":[%ld,\"%s\"]}",
                              i ? "," : "", nodes[i], (long)time(NULL), i == 0 ? "0.8" : "0.01");
    o += (size_t)snprintf(body + o, sizeof(body) - o, "]}}");
    char extra[64];
    snprintf(extra, sizeof(extra), "Content-Length: %zu\r\n", o);
    if (head(fd, extra) == 0)
        put(fd, body, o);
}

static void answer(int fd, const char *mode)
{
    if (!strcmp(mode, "good")) {
        answer_good(fd);
    } else if (!strcmp(mode, "huge")) {
        if (head(fd, NULL) == 0 && put(fd, ENVELOPE, strlen(ENVELOPE)) == 0)
            tiny_series(fd, 4ULL << 30);
    } else if (!strcmp(mode, "many")) {
        if (head(fd, NULL) == 0 && put(fd, ENVELOPE, strlen(ENVELOPE)) == 0 && tiny_series(fd, 31ULL << 20) == 0)
            put(fd, LAST, strlen(LAST));
    } else if (!strcmp(mode, "slow")) {
        if (head(fd, NULL) == 0)
            for (const char *p = ENVELOPE; put(fd, *p ? p : " ", 1) == 0; p += *p ? 1 : 0)
                usleep(200000);
    } else if (!strcmp(mode, "garbage")) {
        static char junk[1 << 20];
        uint32_t x = 2463534242u;
        for (size_t i = 0; i < sizeof(junk); i++) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            junk[i] = (char)(x & 0xff);
        }
        if (head(fd, NULL) == 0)
            put(fd, junk, sizeof(junk));
    } else if (!strcmp(mode, "truncated")) {
        if (head(fd, "Content-Length: 16777216\r\n") == 0 && put(fd, ENVELOPE, strlen(ENVELOPE)) == 0)
            tiny_series(fd, 4ULL << 20);
    } else if (!strcmp(mode, "deep")) {
        static char deep[100000];
        memset(deep, '[', sizeof(deep));
        if (head(fd, NULL) == 0 && put(fd, ENVELOPE "{\"metric\":{\"a\":", strlen(ENVELOPE) + 15) == 0)
            put(fd, deep, sizeof(deep));
    } else {
        const char *nf = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        put(fd, nf, strlen(nf));
    }
}

/* Read the request head (up to 8 KiB) and answer by its path's first segment. */
static void serve(int fd)
{
    char req[8192];
    size_t n = 0;
    while (n < sizeof(req) - 1 && !strstr(req, "\r\n\r\n")) {
        ssize_t r = recv(fd, req + n, sizeof(req) - 1 - n, 0);
        if (r <= 0)
            return;
        n += (size_t)r;
        req[n] = '\0';
    }
    char mode[32] = "";
    if (sscanf(req, "GET /%31[a-z]/", mode) != 1)
        mode[0] = '\0';
    printf("asked %s\n", mode[0] ? mode : "(none)");
    fflush(stdout);
    answer(fd, mode);
    printf("served %s bytes=%llu\n", mode[0] ? mode : "(none)", sent);
    fflush(stdout);
    shutdown(fd, SHUT_WR);
}

int main(int argc, char **argv)
{
    const char *port_file = NULL;
    nodes = calloc((size_t)argc, sizeof(*nodes));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--port-file") && i + 1 < argc)
            port_file = argv[++i];
        else if (!strcmp(argv[i], "--node") && i + 1 < argc)
            nodes[nnodes++] = argv[++i];
        else {
            fprintf(stderr, "usage: hostile_prom --port-file FILE [--node NAME]...\n");
            return 2;
        }
    }
    if (!port_file || !nodes)
        return 2;
    signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 16) < 0 ||
        getsockname(ls, (struct sockaddr *)&a, &al) < 0) {
        perror("hostile_prom: listen");
        return 1;
    }
    FILE *f = fopen(port_file, "w");
    if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0) {
        perror("hostile_prom: port file");
        return 1;
    }
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0)
            continue;
        pid_t pid = fork();
        if (pid == 0) {
            close(ls);
            serve(fd);
            close(fd);
            _exit(0);
        }
        close(fd);
    }
}
