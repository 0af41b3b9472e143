#include "httpd/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

enum mtype { M_COUNTER, M_GAUGE, M_HISTOGRAM };

/* A series and its label values are one allocation: the struct, n_labels pointers, the
 * strings (a per-node series costs about 100 bytes instead of six allocations of 200). */
struct series {
    char **values; /* n_labels strings, in the same block */
    uint64_t hash;
    double value;      /* counter/gauge; histogram sum */
    uint64_t count;    /* histogram */
    uint64_t *buckets; /* histogram, cumulative per bound */
    int stale;         /* not updated since psi_metric_begin */
};

struct psi_metric {
    struct psi_metrics *reg;
    enum mtype type;
    char *name, *help;
    char **labels;
    size_t n_labels;
    double *bounds;
    size_t n_bounds;
    struct series **series; /* array of pointers */
    size_t n, cap;
    size_t *table; /* open addressing: index+1 into series, 0 empty */
    size_t tcap;
};

struct psi_metrics {
    pthread_mutex_t mu;
    struct psi_metric **fams;
    size_t n, cap;
};

/* ---- exposition text ---- */

void psi_metrics_text_add(struct psi_metrics_text *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *d = realloc(t->d, cap);
        if (!d) {
            t->oom = 1;
            return;
        }
        t->d = d;
        t->cap = cap;
    }
    memcpy(t->d + t->len, s, n);
    t->len += n;
    t->d[t->len] = '\0';
}

void psi_metrics_text_str(struct psi_metrics_text *t, const char *s)
{
    psi_metrics_text_add(t, s, strlen(s));
}

/* Escape for a label value (quote too) or for HELP (no quote). */
static void text_escaped(struct psi_metrics_text *t, const char *s, int quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            psi_metrics_text_add(t, "\\\\", 2);
        else if (*s == '\n')
            psi_metrics_text_add(t, "\\n", 2);
        else if (quote && *s == '"')
            psi_metrics_text_add(t, "\\\"", 2);
        else
            psi_metrics_text_add(t, s, 1);
    }
}

void psi_metrics_text_label_value(struct psi_metrics_text *t, const char *s)
{
    text_escaped(t, s, 1);
}

void psi_metrics_text_family(struct psi_metrics_text *t, const char *name, const char *type, const char *help)
{
    psi_metrics_text_str(t, "# HELP ");
    psi_metrics_text_str(t, name);
    psi_metrics_text_add(t, " ", 1);
    text_escaped(t, help, 0);
    psi_metrics_text_str(t, "\n# TYPE ");
    psi_metrics_text_str(t, name);
    psi_metrics_text_add(t, " ", 1);
    psi_metrics_text_str(t, type);
    psi_metrics_text_add(t, "\n", 1);
}

void psi_metrics_text_value(struct psi_metrics_text *t, double v)
{
    char num[64];
    psi_metrics_text_str(t, psi_metrics_format_value(v, num, sizeof(num)));
}

char *psi_metrics_text_finish(struct psi_metrics_text *t, size_t *len)
{
    psi_metrics_text_add(t, "", 0);
    if (t->oom) {
        free(t->d);
        t->d = NULL;
        return NULL;
    }
    if (len)
        *len = t->len;
    return t->d;
}

const char *psi_metrics_format_value(double v, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "NaN");
    } else if (isinf(v)) {
        snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
    } else {
        if (fabs(v) < 1e15 && v == (double)(long long)v) {
            snprintf(buf, len, "%.0f", v); /* an integer: never 1e+01 */
        } else {
            for (int prec = 1; prec <= 17; prec++) {
                snprintf(buf, len, "%.*g", prec, v);
                if (strtod(buf, NULL) == v)
                    break;
            }
        }
    }
    return buf;
}

/* ---- names ---- */

static int valid_metric_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (const char *c = s; *c; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || *c == ':' ||
                 (c != s && *c >= '0' && *c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

static int valid_label_name(const char *s)
{
    if (!s || !*s || (s[0] == '_' && s[1] == '_'))
        return 0;
    for (const char *c = s; *c; c++) {
        int ok =
            (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || (c != s && *c >= '0' && *c <= '9');
        if (!ok)
            return 0;
    }
    return 1;
}

/* ---- registry ---- */

struct psi_metrics *psi_metrics_new(void)
{
    struct psi_metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

static void series_free(struct series *s)
{
    if (!s)
        return;
    free(s->buckets);
    free(s);
}

static void family_free(struct psi_metric *f)
{
    for (size_t i = 0; i < f->n; i++)
        series_free(f->series[i]);
    free(f->series);
    free(f->table);
    for (size_t i = 0; i < f->n_labels; i++)
        free(f->labels[i]);
    free(f->labels);
    free(f->bounds);
    free(f->name);
    free(f->help);
    free(f);
}

void psi_metrics_free(struct psi_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        family_free(m->fams[i]);
    free(m->fams);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static uint64_t hash_values(const char *const *values, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        const char *s = values && values[i] ? values[i] : "";
        for (; *s; s++) {
            h ^= (unsigned char)*s;
            h *= 1099511628211ULL;
        }
        h ^= 0xff;
        h *= 1099511628211ULL;
    }
    return h;
}

static int same_values(const struct series *s, const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = values && values[i] ? values[i] : "";
        if (strcmp(s->values[i], v) != 0)
            return 0;
    }
    return 1;
}

static int table_rebuild(struct psi_metric *f, size_t tcap)
{
    size_t *t = calloc(tcap, sizeof(*t));
    if (!t)
        return -1;
    for (size_t i = 0; i < f->n; i++) {
        size_t j = (size_t)f->series[i]->hash & (tcap - 1);
        while (t[j])
            j = (j + 1) & (tcap - 1);
        t[j] = i + 1;
    }
    free(f->table);
    f->table = t;
    f->tcap = tcap;
    return 0;
}

/* Re-insert every series into the table in place (after a removal). */
static void table_reindex(struct psi_metric *f)
{
    if (!f->tcap)
        return;
    memset(f->table, 0, f->tcap * sizeof(*f->table));
    for (size_t i = 0; i < f->n; i++) {
        size_t j = (size_t)f->series[i]->hash & (f->tcap - 1);
        while (f->table[j])
            j = (j + 1) & (f->tcap - 1);
        f->table[j] = i + 1;
    }
}

/* Find the series of values; create it when create is set. NULL when absent / ENOMEM. */
static struct series *find(struct psi_metric *f, const char *const *values, int create)
{
    uint64_t h = hash_values(values, f->n_labels);
    if (f->tcap) {
        size_t j = (size_t)h & (f->tcap - 1);
        while (f->table[j]) {
            struct series *s = f->series[f->table[j] - 1];
            if (s->hash == h && same_values(s, values, f->n_labels))
                return s;
            j = (j + 1) & (f->tcap - 1);
        }
    }
    if (!create)
        return NULL;
    size_t text = 0;
    for (size_t i = 0; i < f->n_labels; i++)
        text += strlen(values && values[i] ? values[i] : "") + 1;
    struct series *s = calloc(1, sizeof(*s) + f->n_labels * sizeof(char *) + text);
    if (!s)
        return NULL;
    s->hash = h;
    s->values = (char **)(void *)(s + 1);
    char *at = (char *)(s->values + f->n_labels);
    for (size_t i = 0; i < f->n_labels; i++) {
        const char *v = values && values[i] ? values[i] : "";
        size_t len = strlen(v) + 1;
        memcpy(at, v, len);
        s->values[i] = at;
        at += len;
    }
    if (f->type == M_HISTOGRAM && !(s->buckets = calloc(f->n_bounds ? f->n_bounds : 1, sizeof(uint64_t)))) {
        series_free(s);
        return NULL;
    }
    if (BASE_GROW(f->series, f->n + 1, f->cap) < 0) {
        series_free(s);
        return NULL;
    }
    f->series[f->n++] = s;
    if ((f->n) * 2 > f->tcap) {
        size_t tcap = f->tcap ? f->tcap * 2 : 16;
        while (tcap < f->n * 2)
            tcap *= 2;
        if (table_rebuild(f, tcap) < 0) {
            f->n--;
            series_free(s);
            return NULL;
        }
    } else {
        size_t j = (size_t)h & (f->tcap - 1);
        while (f->table[j])
            j = (j + 1) & (f->tcap - 1);
        f->table[j] = f->n;
    }
    return s;
}

static struct psi_metric *add_family(struct psi_metrics *m, enum mtype type, const char *name, const char *help,
                                     const double *bounds, size_t n_bounds, const char *const *labels)
{
    if (!m || !valid_metric_name(name))
        return NULL;
    size_t nl = 0;
    for (; labels && labels[nl]; nl++) {
        if (!valid_label_name(labels[nl]))
            return NULL;
        if (type == M_HISTOGRAM && strcmp(labels[nl], "le") == 0)
            return NULL;
        for (size_t j = 0; j < nl; j++)
            if (strcmp(labels[j], labels[nl]) == 0)
                return NULL;
    }
    for (size_t i = 0; i < n_bounds; i++)
        if (!isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
            return NULL;
    pthread_mutex_lock(&m->mu);
    struct psi_metric *f = NULL;
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->fams[i]->name, name) == 0)
            goto out;
    f = calloc(1, sizeof(*f));
    if (!f)
        goto out;
    f->reg = m;
    f->type = type;
    f->name = strdup(name);
    f->help = strdup(help ? help : "");
    f->labels = calloc(nl ? nl : 1, sizeof(char *));
    f->bounds = calloc(n_bounds ? n_bounds : 1, sizeof(double));
    if (!f->name || !f->help || !f->labels || !f->bounds)
        goto fail;
    for (; f->n_labels < nl; f->n_labels++)
        if (!(f->labels[f->n_labels] = strdup(labels[f->n_labels])))
            goto fail;
    if (n_bounds)
        memcpy(f->bounds, bounds, n_bounds * sizeof(double));
    f->n_bounds = n_bounds;
    if (nl == 0 && !find(f, NULL, 1))
        goto fail;
    if (BASE_GROW(m->fams, m->n + 1, m->cap) < 0)
        goto fail;
    m->fams[m->n++] = f;
    goto out;
fail:
    family_free(f);
    f = NULL;
out:
    pthread_mutex_unlock(&m->mu);
    return f;
}

struct psi_metric *psi_metrics_counter(struct psi_metrics *m, const char *name, const char *help,
                                       const char *const *labels)
{
    return add_family(m, M_COUNTER, name, help, NULL, 0, labels);
}

struct psi_metric *psi_metrics_gauge(struct psi_metrics *m, const char *name, const char *help,
                                     const char *const *labels)
{
    return add_family(m, M_GAUGE, name, help, NULL, 0, labels);
}

struct psi_metric *psi_metrics_histogram(struct psi_metrics *m, const char *name, const char *help,
                                         const double *buckets, size_t n, const char *const *labels)
{
    if (n > 0 && !buckets)
        return NULL;
    return add_family(m, M_HISTOGRAM, name, help, buckets, n, labels);
}

/* The series of values, created when absent, and live again after psi_metric_begin. */
static struct series *update(struct psi_metric *f, const char *const *values)
{
    struct series *s = find(f, values, 1);
    if (s)
        s->stale = 0;
    return s;
}

int psi_metric_inc(struct psi_metric *f, const char *const *values, double delta)
{
    if (!f || f->type != M_COUNTER || !(delta >= 0))
        return -1;
    pthread_mutex_lock(&f->reg->mu);
    struct series *s = update(f, values);
    if (s)
        s->value += delta;
    pthread_mutex_unlock(&f->reg->mu);
    return s ? 0 : -1;
}

int psi_metric_set(struct psi_metric *f, const char *const *values, double v)
{
    if (!f || f->type != M_GAUGE)
        return -1;
    pthread_mutex_lock(&f->reg->mu);
    struct series *s = update(f, values);
    if (s)
        s->value = v;
    pthread_mutex_unlock(&f->reg->mu);
    return s ? 0 : -1;
}

int psi_metric_observe(struct psi_metric *f, const char *const *values, double v)
{
    if (!f || f->type != M_HISTOGRAM || isnan(v))
        return -1;
    pthread_mutex_lock(&f->reg->mu);
    struct series *s = update(f, values);
    if (s) {
        s->value += v;
        s->count++;
        for (size_t i = 0; i < f->n_bounds; i++)
            if (v <= f->bounds[i])
                s->buckets[i]++;
    }
    pthread_mutex_unlock(&f->reg->mu);
    return s ? 0 : -1;
}

int psi_metric_remove(struct psi_metric *f, const char *const *values)
{
    if (!f)
        return -1;
    pthread_mutex_lock(&f->reg->mu);
    struct series *s = find(f, values, 0);
    if (s) {
        size_t i = 0;
        while (f->series[i] != s)
            i++;
        memmove(&f->series[i], &f->series[i + 1], (f->n - i - 1) * sizeof(*f->series));
        f->n--;
        series_free(s);
        table_reindex(f);
    }
    pthread_mutex_unlock(&f->reg->mu);
    return s ? 0 : -1;
}

void psi_metric_begin(struct psi_metric *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->reg->mu);
    for (size_t i = 0; i < f->n; i++)
        f->series[i]->stale = 1;
    pthread_mutex_unlock(&f->reg->mu);
}

void psi_metric_sweep(struct psi_metric *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->reg->mu);
    size_t kept = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (f->series[i]->stale)
            series_free(f->series[i]);
        else
            f->series[kept++] = f->series[i];
    }
    if (kept < f->n) {
        f->n = kept;
        table_reindex(f);
    }
    if (f->n_labels == 0 && f->n == 0)
        find(f, NULL, 1);
    pthread_mutex_unlock(&f->reg->mu);
}

double psi_metric_value(struct psi_metric *f, const char *const *values)
{
    if (!f)
        return NAN;
    pthread_mutex_lock(&f->reg->mu);
    struct series *s = find(f, values, 0);
    double v = NAN;
    if (s)
        v = f->type == M_HISTOGRAM ? (double)s->count : s->value;
    pthread_mutex_unlock(&f->reg->mu);
    return v;
}

/* ---- rendering ---- */

static int cmp_series(const void *a, const void *b, void *arg)
{
    const struct series *x = *(const struct series *const *)a;
    const struct series *y = *(const struct series *const *)b;
    size_t n = *(const size_t *)arg;
    for (size_t i = 0; i < n; i++) {
        int c = strcmp(x->values[i], y->values[i]);
        if (c)
            return c;
    }
    return 0;
}

/* name{labels[,le="x"]} value\n */
static void render_line(struct psi_metrics_text *t, const char *name, const char *suffix, const struct psi_metric *f,
                        const struct series *s, const char *le, double v)
{
    psi_metrics_text_str(t, name);
    psi_metrics_text_str(t, suffix);
    if (f->n_labels || le) {
        psi_metrics_text_add(t, "{", 1);
        for (size_t i = 0; i < f->n_labels; i++) {
            if (i)
                psi_metrics_text_add(t, ",", 1);
            psi_metrics_text_str(t, f->labels[i]);
            psi_metrics_text_add(t, "=\"", 2);
            psi_metrics_text_label_value(t, s->values[i]);
            psi_metrics_text_add(t, "\"", 1);
        }
        if (le) {
            if (f->n_labels)
                psi_metrics_text_add(t, ",", 1);
            psi_metrics_text_add(t, "le=\"", 4);
            psi_metrics_text_str(t, le);
            psi_metrics_text_add(t, "\"", 1);
        }
        psi_metrics_text_add(t, "}", 1);
    }
    psi_metrics_text_add(t, " ", 1);
    psi_metrics_text_value(t, v);
    psi_metrics_text_add(t, "\n", 1);
}

char *psi_metrics_render(struct psi_metrics *m, size_t *len)
{
    static const char *const tnames[] = {"counter", "gauge", "histogram"};
    struct psi_metrics_text b = {0};
    pthread_mutex_lock(&m->mu);
    for (size_t k = 0; k < m->n && !b.oom; k++) {
        struct psi_metric *f = m->fams[k];
        if (f->n == 0)
            continue;
        psi_metrics_text_family(&b, f->name, tnames[f->type], f->help);
        struct series **sorted = malloc(f->n * sizeof(*sorted));
        if (!sorted) {
            b.oom = 1;
            break;
        }
        memcpy(sorted, f->series, f->n * sizeof(*sorted));
        qsort_r(sorted, f->n, sizeof(*sorted), cmp_series, &f->n_labels);
        for (size_t i = 0; i < f->n; i++) {
            const struct series *s = sorted[i];
            if (f->type != M_HISTOGRAM) {
                render_line(&b, f->name, "", f, s, NULL, s->value);
                continue;
            }
            char le[64];
            for (size_t j = 0; j < f->n_bounds; j++)
                render_line(&b, f->name, "_bucket", f, s, psi_metrics_format_value(f->bounds[j], le, sizeof(le)),
                            (double)s->buckets[j]);
            render_line(&b, f->name, "_bucket", f, s, "+Inf", (double)s->count);
            render_line(&b, f->name, "_sum", f, s, NULL, s->value);
            render_line(&b, f->name, "_count", f, s, NULL, (double)s->count);
        }
        free(sorted);
    }
    pthread_mutex_unlock(&m->mu);
    return psi_metrics_text_finish(&b, len);
}
