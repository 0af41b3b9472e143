/* Unit tests of the demand estimate (controller/reconcile/move/demand.c) over generated nodes.
 *
 * Each case is a node of 2-96 CPUs holding VMs (1-8 vCPUs, each vCPU busy 5-100 % of the
 * time) up to a true demand of 0.1-4 x its CPUs (log-uniform). What the node shows is made as
 * the kernel makes it: the CPUs shared out by CFS's fair share (water-filling over the vCPU
 * threads), CPU "some" from the fitted kernel curve (hack/sim/model.h, model_kernel_cpu_some)
 * times a skew, the runnable threads (throttled ones always runnable, the others their busy
 * share times 1 + some, as bench/psi-kernel's runnable counts show), and the waiting ones
 * (runnable less running). The estimate is checked against the true demand per class of
 * signals, before (the planner's former inference on the queueing model, usage / (1 - stall),
 * queueing_demand below) and after (demand_cpu over the planner's kernel-curve inference,
 * rebalance_node_demand). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "hack/sim/model.h"
#include "reconcile/move/demand.h"
#include "reconcile/move/plan.h"

#include "testutil.h"

#define MAX_VMS 512
#define CASES 2000

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
    return xorshift_uniform(&rng);
}

struct node_case {
    double cpus, demand, usage, pressure, load1, waiting;
    size_t nvm;
    struct demand_workload w[MAX_VMS];
};

static void make_case(struct node_case *c, double skew)
{
    static const double sizes[] = {2, 4, 8, 16, 32, 64, 96};
    static const double vcpu_counts[] = {1, 2, 4, 8};
    double busy[MAX_VMS], vcpus[MAX_VMS];
    c->cpus = sizes[(size_t)(uniform() * 7)];
    double target = c->cpus * exp(log(0.1) + uniform() * (log(4.0) - log(0.1)));
    c->demand = 0;
    c->nvm = 0;
    while (c->demand < target && c->nvm < MAX_VMS) {
        vcpus[c->nvm] = vcpu_counts[(size_t)(uniform() * 4)];
        busy[c->nvm] = 0.05 + 0.95 * uniform();
        c->demand += vcpus[c->nvm] * busy[c->nvm];
        c->nvm++;
    }
    double served = c->demand < c->cpus ? c->demand : c->cpus;
    double s = cfs_water_level(busy, vcpus, c->nvm, served);
    double some = model_kernel_cpu_some(c->demand, c->cpus);
    c->usage = 0;
    c->load1 = 0;
    for (size_t j = 0; j < c->nvm; j++) {
        bool throttled = busy[j] >= s;
        c->w[j] = (struct demand_workload){vcpus[j] * (throttled ? s : busy[j]), vcpus[j]};
        c->usage += c->w[j].usage;
        double r = busy[j] * (1 + some);
        c->load1 += vcpus[j] * (throttled || r > 1 ? 1 : r);
    }
    c->waiting = c->load1 > c->usage ? c->load1 - c->usage : 0;
    double p = 100 * some * skew;
    c->pressure = p > 100 ? 100 : p;
}

/* The classes of signals a node may offer. */
enum signals { SIG_VCPUS, SIG_SCHEDSTAT, SIG_LOAD1, SIG_NONE, SIG_N };
static const char *const signal_names[SIG_N] = {"vCPUs + usage", "schedstat", "node_load1", "usage + PSI only"};

/* The planner's former inference, for the comparison: the queueing model's unserved share
 * (some = 1 - served), a node using 90 % of its CPUs counted as using all of them, the unserved
 * share capped at 98 %. */
static double queueing_demand(double usage, double cpus, double pressure)
{
    if (usage >= 0.9 * cpus && usage < cpus)
        usage = cpus;
    double stall = isnan(pressure) || pressure < 0 ? 0 : fmin(pressure / 100, 0.98);
    return usage / (1 - stall);
}

static double estimate(const struct node_case *c, enum signals sig, struct demand_cpu_out *out)
{
    struct demand_cpu_in in = {
        .cpus = c->cpus,
        .usage = c->usage,
        .pressure = c->pressure,
        .from_pressure = rebalance_node_demand(c->usage, c->cpus, c->pressure),
        .load1 = sig == SIG_LOAD1 ? c->load1 : NAN,
        .waiting = sig == SIG_SCHEDSTAT ? c->waiting : NAN,
        .w = sig == SIG_VCPUS ? c->w : NULL,
        .nw = sig == SIG_VCPUS ? c->nvm : 0,
    };
    demand_cpu(&in, out);
    return out->demand;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Error factors (max(est/true, true/est)) of a class: median, 90th percentile, worst. */
struct errors {
    double p50, p90, worst;
    size_t n;
};

static struct errors summarise(double *f, size_t n)
{
    struct errors e = {NAN, NAN, NAN, n};
    if (n == 0)
        return e;
    qsort(f, n, sizeof(double), by_double);
    e.p50 = f[n / 2];
    e.p90 = f[(size_t)(0.9 * (double)(n - 1))];
    e.worst = f[n - 1];
    return e;
}

static double factor(double est, double truth)
{
    if (!(est > 0) || !(truth > 0))
        return INFINITY;
    return est > truth ? est / truth : truth / est;
}

/* Over every class: the estimate is bounded (never below usage; where PSI reads 100 %, at
 * most the largest of its bounding signals), and saturated nodes are estimated better than by
 * the old inference, within the factors measured. */
static void test_generated_classes(void **state)
{
    (void)state;
    static struct node_case c;
    static double old_f[CASES], new_f[CASES], old_u[CASES], new_u[CASES];
    static const struct {
        const char *name;
        double lo, hi;
    } skews[] = {{"kernel curve", 1, 1}, {"skewed x0.5-x2.5", 0.5, 2.5}};
    printf("demand estimate error factor (max(est/true, true/est)): p50 / p90 / worst\n");
    for (size_t k = 0; k < 2; k++)
        for (int sig = 0; sig < SIG_N; sig++) {
            size_t ns = 0, nu = 0;
            for (int i = 0; i < CASES; i++) {
                make_case(&c, skews[k].lo + (skews[k].hi - skews[k].lo) * uniform());
                struct demand_cpu_out out;
                double est = estimate(&c, (enum signals)sig, &out);
                double old = queueing_demand(c.usage, c.cpus, c.pressure);
                assert_true(est >= c.usage - 1e-9);
                if (c.pressure >= 100) {
                    double bound = DEMAND_MAX_LOAD * c.cpus;
                    if (sig == SIG_VCPUS) {
                        double v = 0;
                        for (size_t j = 0; j < c.nvm; j++)
                            v += c.w[j].vcpus;
                        bound = v;
                    } else if (sig == SIG_LOAD1) {
                        bound = c.load1;
                    } else if (sig == SIG_SCHEDSTAT) {
                        bound = c.usage + c.waiting;
                    }
                    assert_true(out.saturated);
                    assert_true(est <= bound + 1e-9);
                }
                if (c.demand >= c.cpus) {
                    old_f[ns] = factor(old, c.demand);
                    new_f[ns++] = factor(est, c.demand);
                } else {
                    old_u[nu] = factor(old, c.demand);
                    new_u[nu++] = factor(est, c.demand);
                }
            }
            struct errors os = summarise(old_f, ns), nws = summarise(new_f, ns);
            struct errors ou = summarise(old_u, nu), nwu = summarise(new_u, nu);
            printf("  %-16s %-16s saturated (%4zu): before %5.2f / %6.2f / %7.2f  after %5.2f / %5.2f / %5.2f\n",
                   skews[k].name, signal_names[sig], ns, os.p50, os.p90, os.worst, nws.p50, nws.p90, nws.worst);
            printf("  %-16s %-16s below     (%4zu): before %5.2f / %6.2f / %7.2f  after %5.2f / %5.2f / %5.2f\n",
                   skews[k].name, signal_names[sig], nu, ou.p50, ou.p90, ou.worst, nwu.p50, nwu.p90, nwu.worst);
            /* saturated: better than before at the 90th percentile and in the worst case */
            assert_true(nws.p90 < os.p90);
            assert_true(nws.worst < os.worst);
            /* below saturation the usage is the demand, up to the share a busy node leaves unserved */
            assert_true(nwu.worst <= ou.worst + 1e-9);
            assert_true(nwu.p90 <= 1.05);
        }
}

/* Saturation is read from pressure or from usage, and the source is said. */
static void test_sources(void **state)
{
    (void)state;
    struct demand_cpu_out out;
    struct demand_cpu_in in = {8, 4, 30, 5.7, NAN, NAN, NULL, 0};
    demand_cpu(&in, &out);
    assert_false(out.saturated);
    assert_int_equal(out.source, DEMAND_USAGE);
    assert_true(out.demand == 4);
    in.pressure = DEMAND_NEAR_FULL;
    in.from_pressure = 200;
    demand_cpu(&in, &out);
    assert_true(out.saturated);
    assert_int_equal(out.source, DEMAND_PRESSURE);
    assert_true(out.demand == DEMAND_MAX_LOAD * 8);
    in.load1 = 12;
    demand_cpu(&in, &out);
    assert_int_equal(out.source, DEMAND_RUNQUEUE);
    assert_true(out.demand == 12);
    in.waiting = 3; /* usage 4 + 3 waiting < 12 runnable */
    demand_cpu(&in, &out);
    assert_int_equal(out.source, DEMAND_SCHEDSTAT);
    assert_true(out.demand == 7);
    /* busy by usage with a low reading */
    struct demand_cpu_in busy = {8, 7.9, 40, 13, NAN, NAN, NULL, 0};
    demand_cpu(&busy, &out);
    assert_true(out.saturated);
    /* two VMs at the top share (0.5 per vCPU) count at their vCPUs, one below it at its usage */
    struct demand_workload w[] = {{2, 4}, {2, 4}, {1, 4}};
    struct demand_cpu_in v = {5, 5, 100, 250, NAN, NAN, w, 3};
    demand_cpu(&v, &out);
    assert_int_equal(out.source, DEMAND_VCPUS);
    assert_true(fabs(out.demand - 9) < 1e-9);
    /* nothing known */
    struct demand_cpu_in none = {NAN, NAN, NAN, NAN, NAN, NAN, NULL, 0};
    demand_cpu(&none, &out);
    assert_true(isnan(out.demand));
    assert_int_equal(out.source, DEMAND_UNKNOWN);
    assert_string_equal(demand_source_name(DEMAND_VCPUS), "VCPUs");
    assert_string_equal(demand_source_name(DEMAND_UNKNOWN), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_classes),
        cmocka_unit_test(test_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
