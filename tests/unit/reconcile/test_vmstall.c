/* Unit tests of a workload's demand and role from its own PSI (controller/reconcile/move/vmstall.c).
 *
 * Generated nodes (1-12 workloads of 1-8 vCPUs, usage 0-8 cores, own stall 0-100 % or not
 * reported, the node's demand 0.5-3 x its usage) are checked against the rules written out
 * here: the unserved demand is shared by own stall and conserved where no vCPU bound holds, a
 * workload wants at least its usage and at most its vCPUs, a missing reading leaves the
 * caller's estimate, and the role is the share-then-stall rule.
 *
 * And the share's worth, on generated saturated nodes as the kernel serves them: VMs of 1-8
 * vCPUs busy 5-100 %, up to 1.05-4 x the node's 2-96 CPUs, shared out by CFS's fair share
 * (water-filling over the vCPU threads: a VM below the level gets all it wants), each VM's own
 * stall from the simulator's fit of bench/psi-kernel's per-cgroup readings
 * (model_pod_cpu_some). With the node's true demand given, each VM's estimate is compared with
 * its true demand, shared by own stall (vmstall_attribute) and by usage (the estimate without
 * per-pod PSI: usage x node demand / node usage). The table is printed, not asserted. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "hack/sim/model.h"
#include "reconcile/move/vmstall.h"

#include "testutil.h"

#define CASES 5000
#define MAX_W 12

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
    return xorshift_uniform(&rng);
}

struct node_case {
    double usage, demand;
    size_t n;
    struct vmstall_workload w[MAX_W];
    double before[MAX_W]; /* the caller's estimate */
};

static void generate(struct node_case *c, double p_missing)
{
    c->n = 1 + (size_t)(uniform() * MAX_W);
    c->usage = 0;
    for (size_t j = 0; j < c->n; j++) {
        double vcpus = 1 + floor(uniform() * 8);
        double usage = uniform() < 0.05 ? NAN : uniform() * vcpus;
        double stall = uniform() < p_missing ? NAN : uniform() < 0.2 ? 0 : uniform() * 100;
        c->before[j] = isnan(usage) ? NAN : usage * (1 + uniform());
        c->w[j] = (struct vmstall_workload){.usage = usage,
                                            .vcpus = uniform() < 0.1 ? NAN : vcpus,
                                            .cpu_stall = stall,
                                            .mem_stall = uniform() < 0.5 ? NAN : uniform() * 30,
                                            .demand = c->before[j]};
        c->usage += isnan(usage) ? 0 : usage;
    }
    c->usage += uniform(); /* the system's own */
    c->demand = c->usage * (0.5 + 2.5 * uniform());
}

static bool every_reading(const struct node_case *c)
{
    for (size_t j = 0; j < c->n; j++)
        if (!isnan(c->w[j].usage) && isnan(c->w[j].cpu_stall))
            return false;
    return true;
}

/* The role rule written out. */
static enum api_workload_role role_of(const struct node_case *c, size_t j)
{
    double used = 0;
    for (size_t k = 0; k < c->n; k++)
        used += isnan(c->w[k].usage) ? 0 : c->w[k].usage;
    const struct vmstall_workload *x = &c->w[j];
    if (used > 0 && !isnan(x->usage) && x->usage >= 0.25 * used)
        return API_ROLE_CAUSES;
    double cpu = isnan(x->cpu_stall) ? 0 : x->cpu_stall, mem = isnan(x->mem_stall) ? 0 : x->mem_stall;
    return (cpu > mem ? cpu : mem) >= 10 ? API_ROLE_SUFFERS : API_ROLE_NONE;
}

static void test_rules_hold_on_generated_nodes(void **state)
{
    (void)state;
    size_t own = 0, fallback = 0;
    for (int i = 0; i < CASES; i++) {
        struct node_case c;
        generate(&c, i % 2 ? 0.1 : 0);
        bool all = every_reading(&c);
        vmstall_attribute(c.usage, c.demand, c.w, c.n);
        double unserved = c.demand > c.usage ? c.demand - c.usage : 0, given = 0, stalled = 0, used = 0;
        bool capped = false;
        for (size_t j = 0; j < c.n; j++) {
            stalled += isnan(c.w[j].usage) || isnan(c.w[j].cpu_stall) ? 0 : c.w[j].cpu_stall;
            used += isnan(c.w[j].usage) ? 0 : c.w[j].usage;
        }
        for (size_t j = 0; j < c.n; j++) {
            const struct vmstall_workload *x = &c.w[j];
            assert_int_equal(x->role, role_of(&c, j));
            if (isnan(x->usage)) {
                assert_int_equal(x->from, API_DEMAND_FROM_NONE);
                continue;
            }
            if (!all) { /* one workload without a reading: the caller's estimate stands */
                assert_int_equal(x->from, API_DEMAND_FROM_NODE_PRESSURE);
                assert_true(x->demand == c.before[j]);
                fallback++;
                continue;
            }
            own++;
            assert_int_equal(x->from, API_DEMAND_FROM_OWN_PRESSURE);
            assert_true(x->demand >= x->usage - 1e-12);
            if (x->vcpus > 0)
                assert_true(x->demand <= fmax(x->usage, x->vcpus) + 1e-12);
            /* shared by own stall; by usage where no workload stalled */
            double want = x->usage + unserved * (stalled > 0 ? x->cpu_stall / stalled : x->usage / used);
            bool bound = x->vcpus > 0 && want > fmax(x->usage, x->vcpus);
            capped = capped || bound;
            if (!bound)
                assert_true(fabs(x->demand - want) < 1e-9);
            given += x->demand - x->usage;
        }
        /* the unserved demand is given out whole unless a vCPU bound held */
        if (all && used > 0 && !capped)
            assert_true(fabs(given - unserved) < 1e-9);
        if (all && unserved == 0)
            for (size_t j = 0; j < c.n; j++)
                if (!isnan(c.w[j].usage))
                    assert_true(c.w[j].demand == c.w[j].usage);
    }
    assert_true(own > 1000 && fallback > 1000);
}

/* More own stall, at equal usage and vCPUs, never means a smaller share. */
static void test_share_follows_own_stall(void **state)
{
    (void)state;
    for (int i = 0; i < CASES; i++) {
        struct vmstall_workload w[2];
        double usage = uniform() * 4, s = uniform() * 100;
        w[0] = (struct vmstall_workload){.usage = usage, .vcpus = 8, .cpu_stall = s, .mem_stall = NAN};
        w[1] = w[0];
        w[1].cpu_stall = s + uniform() * (100 - s);
        vmstall_attribute(2 * usage, 2 * usage * (1 + uniform()), w, 2);
        assert_true(w[1].demand >= w[0].demand - 1e-12);
    }
}

/* vmstall_rank against a full sort by the same order. */
static void test_rank_is_the_order_cut(void **state)
{
    (void)state;
    for (int i = 0; i < CASES; i++) {
        struct node_case c;
        generate(&c, 0.2);
        vmstall_attribute(c.usage, c.demand, c.w, c.n);
        size_t max = 1 + (size_t)(uniform() * 4), idx[MAX_W], all[MAX_W];
        size_t k = vmstall_rank(c.w, c.n, idx, max), n = vmstall_rank(c.w, c.n, all, MAX_W);
        assert_int_equal(k, c.n < max ? c.n : max);
        assert_int_equal(n, c.n);
        for (size_t j = 0; j < k; j++)
            assert_int_equal(idx[j], all[j]);
        for (size_t j = 1; j < n; j++) { /* causes first, then by stall */
            const struct vmstall_workload *a = &c.w[all[j - 1]], *b = &c.w[all[j]];
            assert_false(a->role != API_ROLE_CAUSES && b->role == API_ROLE_CAUSES);
        }
    }
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void print_errors(const char *what, double *f, size_t n)
{
    qsort(f, n, sizeof(*f), by_double);
    printf("  %-34s %6zu VMs: error factor p50 %.2f, p90 %.2f, worst %.2f\n", what, n, f[n / 2], f[n * 9 / 10],
           f[n - 1]);
}

#define SAT_CASES 2000
#define SAT_VMS 64

static void test_share_against_cfs(void **state)
{
    (void)state;
    static const double sizes[] = {2, 4, 8, 16, 32, 64, 96}, counts[] = {1, 2, 4, 8};
    static double own[SAT_CASES * SAT_VMS], byusage[SAT_CASES * SAT_VMS], own_t[SAT_CASES * SAT_VMS],
        byusage_t[SAT_CASES * SAT_VMS];
    size_t n = 0, nt = 0;
    for (int i = 0; i < SAT_CASES; i++) {
        double cpus = sizes[(size_t)(uniform() * 7)], target = cpus * (1.05 + 2.95 * uniform()), demand = 0;
        double busy[SAT_VMS], vcpus[SAT_VMS];
        size_t nvm = 0;
        while (demand < target && nvm < SAT_VMS) {
            vcpus[nvm] = counts[(size_t)(uniform() * 4)];
            busy[nvm] = 0.05 + 0.95 * uniform();
            demand += vcpus[nvm] * busy[nvm];
            nvm++;
        }
        if (demand <= cpus)
            continue;
        double level = cfs_water_level(busy, vcpus, nvm, cpus), some = model_kernel_cpu_some(demand, cpus), used = 0;
        struct vmstall_workload w[SAT_VMS];
        for (size_t j = 0; j < nvm; j++) {
            double want = vcpus[j] * busy[j], got = vcpus[j] * (busy[j] < level ? busy[j] : level);
            w[j] = (struct vmstall_workload){.usage = got,
                                             .vcpus = vcpus[j],
                                             .cpu_stall = 100 * model_pod_cpu_some(some, want, cpus),
                                             .mem_stall = NAN};
            used += got;
        }
        vmstall_attribute(used, demand, w, nvm);
        for (size_t j = 0; j < nvm; j++) {
            double want = vcpus[j] * busy[j], a = w[j].demand, b = fmin(w[j].usage * demand / used, vcpus[j]);
            assert_true(a >= w[j].usage - 1e-9 && a <= vcpus[j] + 1e-9);
            own[n] = fmax(a / want, want / a);
            byusage[n++] = fmax(b / want, want / b);
            if (busy[j] > level) {
                own_t[nt] = own[n - 1];
                byusage_t[nt++] = byusage[n - 1];
            }
        }
    }
    printf("saturated nodes, the node's demand known, each VM's demand against its true demand (CFS):\n");
    print_errors("shared by own stall, all VMs", own, n);
    print_errors("shared by usage, all VMs", byusage, n);
    print_errors("shared by own stall, throttled VMs", own_t, nt);
    print_errors("shared by usage, throttled VMs", byusage_t, nt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_hold_on_generated_nodes),
        cmocka_unit_test(test_share_follows_own_stall),
        cmocka_unit_test(test_rank_is_the_order_cut),
        cmocka_unit_test(test_share_against_cfs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
