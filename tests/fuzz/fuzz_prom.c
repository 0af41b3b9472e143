/* A Prometheus /api/v1/query reply: read at a 200 and a 503; read as it arrives (chunk and
 * step sizes picked by the input), which must hand its sink the series the whole read keeps
 * and end as it does; and the PSI sample read from it for three nodes, which must fail exactly when
 * the reply does and for the same reason (or, the reply being good, for an invalid value). */
#include <stdio.h>

#include "fuzz.h"
#include "psi/prom.h"
#include "psi/promreply.h"

/* The series handed, as a running hash and a count. */
struct seen {
    size_t n;
    uint64_t hash;
};

static void mix(struct seen *x, const char *text)
{
    for (; *text; text++)
        x->hash = (x->hash ^ (unsigned char)*text) * 1099511628211ULL;
    x->hash = (x->hash ^ 0xFF) * 1099511628211ULL;
}

static void see(void *ud, const struct psi_prom_series *s)
{
    struct seen *x = ud;
    for (size_t i = 0; i < s->n_labels; i++) {
        mix(x, s->labels[i].name);
        mix(x, s->labels[i].value);
    }
    char value[64];
    snprintf(value, sizeof(value), "%.17g@%.17g", s->value, s->timestamp);
    mix(x, value);
    x->n++;
}

static void stream_equals_whole(const uint8_t *data, size_t size)
{
    size_t chunk = size ? 1 + data[0] % 97 : 1, step = size > 1 ? 16 + data[1] : 16;
    struct seen whole = {0}, streamed = {0};
    struct psi_promreply_sink ss = {see, &streamed};
    struct psi_promreply a, b;
    char wa[256] = "", wb[256] = "";
    int ra = psi_promreply_read((const char *)data, size, &a, wa, sizeof(wa));
    for (size_t i = 0; i < a.vector.n; i++)
        see(&whole, &a.vector.series[i]);
    struct psi_promreply_stream s;
    psi_promreply_stream_init(&s, &ss);
    s.step = step;
    for (size_t at = 0; at < size; at += chunk)
        if (psi_promreply_stream_feed(&s, (const char *)data + at, size - at < chunk ? size - at : chunk) < 0)
            abort();
    int rb = psi_promreply_stream_end(&s, &b, wb, sizeof(wb));
    if (ra != rb || strcmp(wa, wb) != 0 || strcmp(a.result_problem, b.result_problem) != 0)
        abort();
    if (ra == 0 && !a.result_problem[0] && (whole.n != streamed.n || whole.hash != streamed.hash))
        abort();
    psi_promreply_free(&a);
    psi_promreply_free(&b);
    psi_promreply_stream_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct psi_prom_vector v;
    struct kube_err st;
    psi_prom_parse_reply((const char *)data, size, 503, "http://fuzz", &v, &st);
    psi_prom_vector_free(&v);
    stream_equals_whole(data, size);
    int reply_rc = psi_prom_parse_reply((const char *)data, size, 200, "http://fuzz", &v, &st);
    psi_prom_vector_free(&v);
    const char *ip = "10.0.0.1";
    const struct psi_node_desc nodes[] = {{"worker-0", &ip, 1, 0}, {"worker-1", NULL, 0, 0}, {"", NULL, 0, 0}};
    struct psi_request req = {nodes, 3, 0, 0, 60, 1};
    struct psi_sample s;
    if (psi_sample_init(&s, &req) < 0)
        return 0;
    int rc = psi_prom_read_sample((const char *)data, size, 200, "http://fuzz", &req, &s);
    if (reply_rc < 0 && (rc == 0 || strcmp(s.status.reason, st.reason) != 0))
        abort();
    if (reply_rc == 0 && rc < 0 && strcmp(s.status.reason, PSI_REASON_INVALID) != 0)
        abort();
    psi_sample_free(&s);
    return 0;
}
