/* psi_specfile: files a PsiRebalance names, opened only when they pass the rule. */
#include "psi/specfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const psi_specfile_roots[] = {"/var/run/secrets/", "/run/secrets/", "/etc/psi-rebalancer/", NULL};

/* True when no component of the absolute path p is empty, "." or "..". */
static bool components_plain(const char *p)
{
    for (const char *c = p + 1;;) {
        const char *end = strchr(c, '/');
        size_t n = end ? (size_t)(end - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        if (!end)
            return true;
        c = end + 1;
    }
}

bool psi_specfile_path_allowed(const char *path, const char *const *roots)
{
    if (!path || path[0] != '/' || !components_plain(path))
        return false;
    for (; *roots; roots++) {
        size_t n = strlen(*roots);
        if (n > 1 && (*roots)[n - 1] == '/' && strncmp(path, *roots, n) == 0 && path[n])
            return true;
    }
    return false;
}

const char *psi_specfile_refusal(const char *field, const char *const *roots, size_t max, char *buf, size_t len)
{
    if (!roots)
        roots = psi_specfile_roots;
    char size[32];
    if (max % (1024 * 1024) == 0)
        snprintf(size, sizeof(size), "%zu MiB", max / (1024 * 1024));
    else if (max % 1024 == 0)
        snprintf(size, sizeof(size), "%zu KiB", max / 1024);
    else
        snprintf(size, sizeof(size), "%zu bytes", max);
    int n = snprintf(buf, len, "%s must be a regular file of at most %s under ", field, size);
    for (size_t i = 0; roots[i] && n >= 0 && (size_t)n < len; i++)
        n += snprintf(buf + n, len - (size_t)n, "%s%s", i == 0 ? "" : roots[i + 1] ? ", " : " or ", roots[i]);
    return buf;
}

/* True when resolved (a path with no links left) lies under one of roots, each compared as
 * written and with its own links resolved. */
static bool resolved_allowed(const char *resolved, const char *const *roots)
{
    if (psi_specfile_path_allowed(resolved, roots))
        return true;
    for (; *roots; roots++) {
        char real[PATH_MAX + 1];
        if (!realpath(*roots, real))
            continue;
        size_t n = strlen(real);
        if (n + 1 >= sizeof(real))
            continue;
        real[n] = '/';
        real[n + 1] = '\0';
        const char *one[] = {real, NULL};
        if (psi_specfile_path_allowed(resolved, one))
            return true;
    }
    return false;
}

int psi_specfile_open(const char *path, const char *const *roots, size_t max, struct stat *sb)
{
    if (!roots)
        roots = psi_specfile_roots;
    if (!psi_specfile_path_allowed(path, roots))
        return -1;
    char resolved[PATH_MAX];
    if (!realpath(path, resolved) || !resolved_allowed(resolved, roots))
        return -1;
    int fd = open(resolved, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0)
        return -1;
    if (fstat(fd, sb) < 0 || !S_ISREG(sb->st_mode) || sb->st_size < 0 || (size_t)sb->st_size > max) {
        close(fd);
        return -1;
    }
    return fd;
}

char *psi_specfile_read(int fd, size_t max, size_t *len)
{
    char *buf = malloc(max + 1);
    if (!buf)
        return NULL;
    size_t n = 0;
    for (;;) {
        ssize_t r = pread(fd, buf + n, max + 1 - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > max) {
            memset(buf, 0, n);
            free(buf);
            return NULL;
        }
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}
