/* Unit tests for psi_specfile (files a PsiRebalance names, read by a rule): the path rule over
 * every path made of hostile and plain components, and the open over what a hostile path can
 * name: a FIFO, a socket, a device, /proc and /proc/self/fd/N (a pipe of this process), a
 * symbolic link to a FIFO or out of the roots, a directory, an oversize file; and what must
 * keep working: a plain file and a Secret's ..data link chain. Every refusal returns at once,
 * so a test that would block (the read of a FIFO before the rule) hangs until ctest's
 * timeout instead of passing. */
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "psi/specfile.h"

static char dir[64], root[80];
static const char *roots[2];

static const char *path_of(const char *name)
{
    static char p[4][160];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
    return p[i];
}

static void write_file(const char *name, size_t size)
{
    FILE *f = fopen(path_of(name), "w");
    assert_non_null(f);
    for (size_t i = 0; i < size; i++)
        fputc('a' + (int)(i % 26), f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/psi-specfile-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(root, sizeof(root), "%s/", dir);
    roots[0] = root;
    roots[1] = NULL;
    return 0;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    (void)state;
    return nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* True when path opens under roots r (a regular file of at most max bytes); closes it. */
static bool opens(const char *path, const char *const *r, size_t max)
{
    struct stat sb;
    int fd = psi_specfile_open(path, r, max, &sb);
    if (fd < 0)
        return false;
    assert_true(S_ISREG(sb.st_mode));
    close(fd);
    return true;
}

/* The path rule over every path of up to four components drawn from plain and hostile ones,
 * under a root and outside it: allowed exactly when under the root with no empty, "." or ".."
 * component. */
static void test_path_rule_generated(void **state)
{
    (void)state;
    static const char *const parts[] = {"a", "..data", "x..", ".", "..", "", "...", "token"};
    static const char *const prefixes[] = {"/var/run/secrets/", "/run/secrets/", "/etc/psi-rebalancer/",
                                           "/proc/self/fd/",    "/etc/",         "/var/run/secretsx/",
                                           "var/run/secrets/"};
    const size_t np = sizeof(parts) / sizeof(parts[0]);
    size_t checked = 0, allowed = 0;
    for (size_t pre = 0; pre < sizeof(prefixes) / sizeof(prefixes[0]); pre++) {
        for (size_t depth = 1; depth <= 4; depth++) {
            size_t combos = 1;
            for (size_t d = 0; d < depth; d++)
                combos *= np;
            for (size_t c = 0; c < combos; c++) {
                char path[256];
                size_t n = (size_t)snprintf(path, sizeof(path), "%s", prefixes[pre]);
                bool plain = true;
                for (size_t d = 0, k = c; d < depth; d++, k /= np) {
                    const char *part = parts[k % np];
                    n += (size_t)snprintf(path + n, sizeof(path) - n, "%s%s", d ? "/" : "", part);
                    if (!*part || !strcmp(part, ".") || !strcmp(part, ".."))
                        plain = false;
                }
                bool want = pre < 3 && plain;
                assert_int_equal(psi_specfile_path_allowed(path, psi_specfile_roots), want);
                checked++;
                allowed += want;
            }
        }
    }
    assert_true(allowed > 0 && allowed < checked);
    assert_false(psi_specfile_path_allowed("/var/run/secrets/", psi_specfile_roots)); /* the root itself */
    assert_false(psi_specfile_path_allowed(NULL, psi_specfile_roots));
    assert_false(psi_specfile_path_allowed("", psi_specfile_roots));
}

/* The refusal is one sentence naming the field, the size and the roots. */
static void test_refusal_text(void **state)
{
    (void)state;
    char buf[256];
    assert_string_equal(psi_specfile_refusal("bearerTokenFile", NULL, 64 * 1024, buf, sizeof(buf)),
                        "bearerTokenFile must be a regular file of at most 64 KiB under " PSI_SPECFILE_ROOTS_TEXT);
    const char *two[] = {"/a/", "/b/", NULL};
    assert_string_equal(psi_specfile_refusal("caFile", two, 4 * 1024 * 1024, buf, sizeof(buf)),
                        "caFile must be a regular file of at most 4 MiB under /a/ or /b/");
}

static void test_plain_file_and_secret_links(void **state)
{
    (void)state;
    write_file("plain", 10);
    assert_true(opens(path_of("plain"), roots, 64));
    /* a mounted Secret: token -> ..data/token, ..data -> ..2024_01_01_00_00_00.1 */
    assert_int_equal(mkdir(path_of("secret"), 0700), 0);
    assert_int_equal(mkdir(path_of("secret/..2024_01_01_00_00_00.1"), 0700), 0);
    write_file("secret/..2024_01_01_00_00_00.1/token", 20);
    assert_int_equal(symlink("..2024_01_01_00_00_00.1", path_of("secret/..data")), 0);
    assert_int_equal(symlink("..data/token", path_of("secret/token")), 0);
    assert_true(opens(path_of("secret/token"), roots, 64));

    struct stat sb;
    int fd = psi_specfile_open(path_of("secret/token"), roots, 64, &sb);
    assert_true(fd >= 0);
    size_t len = 0;
    char *text = psi_specfile_read(fd, 64, &len);
    close(fd);
    assert_non_null(text);
    assert_int_equal(len, 20);
    assert_string_equal(text, "abcdefghijklmnopqrst");
    free(text);
}

static void test_refused_shapes(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(path_of("fifo"), 0600), 0);
    assert_false(opens(path_of("fifo"), roots, 64));
    assert_int_equal(symlink(path_of("fifo"), path_of("to-fifo")), 0);
    assert_false(opens(path_of("to-fifo"), roots, 64));

    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path_of("sock"));
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_false(opens(path_of("sock"), roots, 64));
    close(s);

    assert_int_equal(mkdir(path_of("dir"), 0700), 0);
    assert_false(opens(path_of("dir"), roots, 64));

    write_file("big", 65);
    assert_false(opens(path_of("big"), roots, 64));
    assert_true(opens(path_of("big"), roots, 65));

    assert_false(opens(path_of("missing"), roots, 64));
}

/* A device, with /dev/ among the roots so that only the file's kind refuses it. */
static void test_device_refused_by_kind(void **state)
{
    (void)state;
    const char *with_dev[] = {"/dev/", NULL};
    assert_false(opens("/dev/null", with_dev, 64));
    assert_false(opens("/dev/zero", with_dev, 64));
}

/* Links out of the roots, and paths through "..", are refused even when the target is a
 * readable regular file. */
static void test_escapes_refused(void **state)
{
    (void)state;
    char outside[] = "/tmp/psi-specfile-out-XXXXXX";
    int ofd = mkstemp(outside);
    assert_true(ofd >= 0);
    assert_int_equal(write(ofd, "token", 5), 5);
    close(ofd);
    const char *wide[] = {"/tmp/", NULL};
    assert_true(opens(outside, wide, 64)); /* the file itself is fine */

    assert_int_equal(symlink(outside, path_of("escape")), 0);
    assert_false(opens(path_of("escape"), roots, 64));
    assert_int_equal(symlink("/etc/hostname", path_of("etc")), 0);
    assert_false(opens(path_of("etc"), roots, 64));

    char dotdot[256];
    snprintf(dotdot, sizeof(dotdot), "%s/../%s", dir, strrchr(outside, '/') + 1);
    assert_false(opens(dotdot, roots, 64));
    snprintf(dotdot, sizeof(dotdot), "%s/./escape", dir);
    assert_false(opens(dotdot, roots, 64));
    unlink(outside);
}

/* /proc: this process's own pipe as /proc/self/fd/N (with and without /proc/ among the roots),
 * a link in the roots to it, and /proc files. None blocks, none opens. */
static void test_proc_refused(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    char self_fd[64];
    snprintf(self_fd, sizeof(self_fd), "/proc/self/fd/%d", p[0]);
    assert_false(opens(self_fd, roots, 64));
    assert_false(opens(self_fd, NULL, 64));
    const char *with_proc[] = {"/proc/", NULL};
    assert_false(opens(self_fd, with_proc, 64));
    assert_int_equal(symlink(self_fd, path_of("to-pipe")), 0);
    assert_false(opens(path_of("to-pipe"), roots, 64));
    assert_false(opens(path_of("to-pipe"), with_proc, 64));
    assert_false(opens("/proc/self/environ", NULL, 64 * 1024));
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_rule_generated),
        cmocka_unit_test(test_refusal_text),
        cmocka_unit_test_setup_teardown(test_plain_file_and_secret_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_shapes, setup, teardown),
        cmocka_unit_test(test_device_refused_by_kind),
        cmocka_unit_test_setup_teardown(test_escapes_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proc_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
