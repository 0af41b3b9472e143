/* Unit tests for psi_authz's answers to the caller: a review that fails (here: the API
 * server's loopback port refuses the connection) gives 500 with a text that names neither
 * the API server's address nor its port, for generated ports and tokens. The review runs
 * in the reviewer thread: the first check answers PSI_AUTHZ_LATER, the done callback
 * names the ticket, and the check asked again with it gives the answer. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "serve/authz.h"

/* A loopback port nothing listens on: bound by the kernel's choice, then closed. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t len = sizeof(sa);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

/* The done callback: the ticket goes down a pipe. */
static void on_done(void *ud, unsigned long long ticket)
{
    const int *fds = ud;
    ssize_t w = write(fds[1], &ticket, sizeof(ticket));
    (void)w;
}

static void test_500_hides_the_api_server(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++) {
        int port = closed_port();
        char kc[] = "/tmp/psi-authz-kc-XXXXXX";
        int fd = mkstemp(kc);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        fprintf(f,
                "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:%d'}\n"
                "users:\n- name: u\n  user: {token: operator-token}\n"
                "contexts:\n- name: c\n  context: {cluster: c, user: u}\n",
                port);
        fclose(f);
        char err[256];
        int done[2];
        assert_int_equal(pipe(done), 0);
        struct psi_authz *a = psi_authz_new(kc, NULL, NULL, on_done, done, err, sizeof(err));
        unlink(kc);
        assert_non_null(a);
        char token[32], why[512], portstr[16];
        snprintf(token, sizeof(token), "caller-token-%d", i);
        snprintf(portstr, sizeof(portstr), "%d", port);
        unsigned long long ticket = 100 + (unsigned long long)i, told = 0;
        assert_int_equal(psi_authz_check(a, token, "get", "/metrics", ticket, why, sizeof(why)), PSI_AUTHZ_LATER);
        assert_int_equal(read(done[0], &told, sizeof(told)), sizeof(told));
        assert_true(told == ticket);
        assert_int_equal(psi_authz_check(a, token, "get", "/metrics", ticket, why, sizeof(why)), 500);
        assert_null(strstr(why, "127.0.0.1"));
        assert_null(strstr(why, portstr));
        assert_null(strstr(why, "tokenreviews"));
        assert_string_equal(why, "metrics authorization unavailable; see the operator's log\n");
        assert_int_equal(psi_authz_stats(a).api_calls, 1); /* the review was really tried */
        psi_authz_free(a);
        close(done[0]);
        close(done[1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_500_hides_the_api_server)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
