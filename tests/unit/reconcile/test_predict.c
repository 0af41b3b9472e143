/* Property tests of the planner's CPU model (controller/reconcile/move/predict.c) over
 * generated loads, and its error against a kernel-shaped truth.
 *
 * Properties, over thousands of generated (demand, capacity) pairs: the curve and its inverse
 * are increasing and inverse to each other below the flat part; a node's demand inferred from
 * the reading its load gives on the curve is that load times its capacity (with any scale the
 * reading is skewed by, once calibrated); on the flat part and beyond, demand is bounded by
 * the flat point's load; calibration converges to a node's skew.
 *
 * The error: nodes of 2-96 CPUs at a true load of 0.2-2.5 x capacity, whose pressure follows
 * one of bench/psi-kernel's per-size Weibull fits (1 CPU: scale 0.909, shape 3.529; 2 CPUs:
 * 0.938, 4.571; bench/results/psi-kernel-2026-12-03-full.txt), a VM of 5-50 % of the demand
 * moved off each to a destination of true load 0.05-0.7. Demand is inferred as the edge does
 * (rebalance_node_demand_scaled, then demand_cpu with the VMs' vCPUs where saturated); the
 * source and the destination are predicted as the planner does (plan.c, calibrate_nodes and
 * predict_at), the destination where it is predicted below 50 % (a move the planner may make).
 * The test prints the mean and 90th percentile of |predicted - true| (points) and the demand
 * error factor, unsaturated and saturated. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "reconcile/move/demand.h"
#include "reconcile/move/predict.h"

#include "testutil.h"

#define N 5000

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
    return xorshift_uniform(&rng);
}

static double between(double lo, double hi)
{
    return lo + (hi - lo) * uniform();
}

/* The curve and its inverse: increasing, in 0..1, inverse to each other below the flat part. */
static void test_curve_and_inverse(void **state)
{
    (void)state;
    double flat = rebalance_load_from_some(REBALANCE_FLAT);
    assert_true(fabs(rebalance_curve(flat) - REBALANCE_FLAT) < 1e-9);
    for (int i = 0; i < N; i++) {
        double a = between(0, 3), b = between(0, 3), lo = fmin(a, b), hi = fmax(a, b);
        double fl = rebalance_curve(lo), fh = rebalance_curve(hi);
        assert_true(fl >= 0 && fh <= 1);
        assert_true(fl <= fh);
        if (hi - lo > 1e-6 && hi < 1.6)
            assert_true(fl < fh);
        double s = between(0, 1), t = between(0, 1);
        assert_true(rebalance_load_from_some(fmin(s, t)) <= rebalance_load_from_some(fmax(s, t)));
        if (lo > 1e-3 && lo < flat)
            assert_true(fabs(rebalance_load_from_some(rebalance_curve(lo)) - lo) < 1e-9 * (1 + lo));
        if (s < REBALANCE_FLAT)
            assert_true(fabs(rebalance_curve(rebalance_load_from_some(s)) - s) < 1e-9);
        else
            assert_true(rebalance_load_from_some(s) == flat);
    }
}

/* Demand from a reading on the curve: the load times the capacity below the flat part,
 * scaled or not; bounded on it; never below usage; never unbounded. */
static void test_demand_recovers_load(void **state)
{
    (void)state;
    double flat = rebalance_load_from_some(REBALANCE_FLAT);
    for (int i = 0; i < N; i++) {
        double cpus = between(2, 96), load = between(0.05, 3), demand = load * cpus;
        double usage = fmin(demand, cpus), k = between(0.5, 2.5);
        double P = 100 * k * rebalance_curve(load);
        double d = rebalance_node_demand_scaled(usage, cpus, P, k);
        assert_true(isfinite(d));
        assert_true(d >= usage);
        assert_true(d <= fmax(usage, flat * cpus) * (1 + 1e-12));
        if (rebalance_curve(load) < REBALANCE_FLAT && load > 0.1)
            assert_true(fabs(d - demand) < 1e-6 * demand);
        /* a workload on it: its usage times what its node is served short of */
        double u = usage * between(0.01, 1), served = fmin(1, cpus / demand);
        double w = rebalance_demand_scaled(u, P, k);
        assert_true(w >= u && w <= u * flat * (1 + 1e-12));
        if (rebalance_curve(load) < REBALANCE_FLAT && load > 0.1)
            assert_true(fabs(w - u / served) < 1e-6 * w);
        /* any reading, however high, any scale: bounded */
        double Pany = between(0, 1000), kany = between(-1, 20);
        assert_true(rebalance_node_demand_scaled(usage, cpus, Pany, kany) <= fmax(usage, flat * cpus) * (1 + 1e-12));
        assert_true(rebalance_demand_scaled(u, Pany, kany) <= u * flat * (1 + 1e-12));
    }
    assert_true(isnan(rebalance_node_demand_scaled(NAN, 4, 50, 1)));
    assert_true(rebalance_node_demand_scaled(2, 4, NAN, 1) == 2);
}

/* Calibration: readings skewed by k on a node below saturation converge to k, and demand read
 * with it recovers the load. */
static void test_calibration_converges(void **state)
{
    (void)state;
    for (int i = 0; i < 1000; i++) {
        double k = between(REBALANCE_SCALE_MIN, 4), cpus = between(2, 96), scale = 0;
        double load = 0;
        for (int r = 0; r < 40; r++) {
            load = between(0.4, 0.95);
            scale = rebalance_calibrate(scale, load, fmin(100, 100 * k * rebalance_curve(load)));
        }
        /* a reading capped at 100 % says less than k: only where the curve times k is below 1 */
        if (k * rebalance_curve(0.95) < 1) {
            assert_true(fabs(scale - k) < 0.01 * k);
            double P = 100 * k * rebalance_curve(load);
            assert_true(fabs(rebalance_node_demand_scaled(load * cpus, cpus, P, scale) - load * cpus) <
                        0.02 * load * cpus);
        }
        assert_true(scale >= REBALANCE_SCALE_MIN && scale <= REBALANCE_SCALE_MAX);
    }
}

/* ---- the error against a kernel-shaped truth ---- */

static double truth(double load, int fit)
{
    static const double scale[2] = {0.909, 0.938}, shape[2] = {3.529, 4.571};
    return load <= 0 ? 0 : 1 - exp(-pow(load / scale[fit], shape[fit]));
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void summary(const char *what, double *v, size_t n, double *mean_out)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    qsort(v, n, sizeof(double), by_double);
    double mean = n ? sum / (double)n : NAN, p90 = n ? v[(size_t)(0.9 * (double)(n - 1))] : NAN;
    printf("  %-44s (%4zu): mean %6.2f  p90 %6.2f  worst %6.2f\n", what, n, mean, p90, n ? v[n - 1] : NAN);
    if (mean_out)
        *mean_out = mean;
}

/* The planner's prediction of node i's pressure at load L from its reading P at load L0 with
 * scale k (plan.c predict_at). */
static double predict_at(double P, double k, double L0, double L)
{
    double v = P + 100 * k * (rebalance_curve(L) - rebalance_curve(L0));
    return v < 0 ? 0 : v > 100 ? 100 : v;
}

/* The scale plan.c gives a source (its own reading) or a destination (its calibration, else
 * the safety margin, never less than its reading shows). */
static double source_scale(double P, double L0)
{
    double f = rebalance_curve(L0);
    return f >= REBALANCE_INFORMATIVE ? rebalance_clamp_scale(P / (100 * f)) : 1;
}

static double destination_scale(double P, double L0, double cal)
{
    double f = rebalance_curve(L0), k = cal > 0 ? cal : REBALANCE_SAFETY;
    if (f >= REBALANCE_INFORMATIVE && rebalance_clamp_scale(P / (100 * f)) > k)
        k = rebalance_clamp_scale(P / (100 * f));
    return k;
}

static void test_error_against_kernel_truth(void **state)
{
    (void)state;
    static double src_u[N], src_s[N], dst[N], dst_c[N], dem_u[N], dem_s[N];
    size_t nsu = 0, nss = 0, nd = 0, ndc = 0, ndu = 0, nds = 0;
    static struct demand_workload w[64];
    for (int i = 0; i < N; i++) {
        int fit = uniform() < 0.5;
        double cpus = floor(between(2, 97)), L0 = exp(between(log(0.2), log(2.5))), D = L0 * cpus;
        double served = fmin(1, cpus / D), usage = D * served, P = 100 * truth(L0, fit);
        /* its VMs: the moved one (5-50 % of the demand) and the rest in VMs of 1-8 vCPUs */
        double d = D * between(0.05, 0.5), rest = D - d;
        size_t nw = 0;
        w[nw++] = (struct demand_workload){d * served, ceil(d * between(1, 1.5))};
        while (rest > 1e-9 && nw < 64) {
            double vcpus = floor(between(1, 9)), want = fmin(rest, vcpus * between(0.3, 1));
            w[nw++] = (struct demand_workload){want * served, vcpus};
            rest -= want;
        }
        /* the edge: inference, bounded where saturated, workloads scaled by the node's ratio */
        double inferred = rebalance_node_demand_scaled(usage, cpus, P, 0);
        struct demand_cpu_in in = {.cpus = cpus,
                                   .usage = usage,
                                   .pressure = P,
                                   .from_pressure = inferred,
                                   .load1 = NAN,
                                   .waiting = NAN,
                                   .w = w,
                                   .nw = nw};
        struct demand_cpu_out out;
        demand_cpu(&in, &out);
        double D_est = out.saturated ? out.demand : inferred;
        double d_est =
            out.saturated ? w[0].usage * fmax(1, out.demand / usage) : rebalance_demand_scaled(w[0].usage, P, 0);
        d_est = fmin(d_est, w[0].vcpus);
        double factor = D_est > D ? D_est / D : D / D_est;
        if (out.saturated)
            dem_s[nds++] = factor;
        else
            dem_u[ndu++] = factor;
        /* the source after the move */
        double L0_est = D_est / cpus, L1_est = fmax(0, D_est - d_est) / cpus;
        double err = fabs(predict_at(P, source_scale(P, L0_est), L0_est, L1_est) - 100 * truth((D - d) / cpus, fit));
        if (out.saturated)
            src_s[nss++] = err;
        else
            src_u[nsu++] = err;
        /* a destination, calibrated on earlier readings when they were informative */
        int tfit = uniform() < 0.5;
        double tcpus = floor(between(2, 97)), Lt = between(0.05, 0.7), Pt = 100 * truth(Lt, tfit);
        double cal = rebalance_calibrate(0, Lt, Pt);
        double Lt_est = rebalance_node_demand_scaled(Lt * tcpus, tcpus, Pt, cal) / tcpus;
        double after = predict_at(Pt, destination_scale(Pt, Lt_est, cal), Lt_est, Lt_est + d_est / tcpus);
        double e = fabs(after - 100 * truth(Lt + d / tcpus, tfit));
        if (after >= 50)
            continue; /* a move no taint level up to 50 % lets the planner make */
        if (cal > 0)
            dst_c[ndc++] = e;
        else
            dst[nd++] = e;
    }
    printf("planner against the kernel-shaped truth (|predicted - true|, points):\n");
    double mean_su, mean_ss, mean_d;
    summary("source after the move, unsaturated", src_u, nsu, &mean_su);
    summary("source after the move, saturated", src_s, nss, &mean_ss);
    summary("destination after the move, calibrated", dst_c, ndc, &mean_d);
    summary("destination after the move, safety margin", dst, nd, NULL);
    printf("demand inference (max(est/true, true/est)):\n");
    summary("unsaturated nodes", dem_u, ndu, NULL);
    summary("saturated nodes (vCPU bound)", dem_s, nds, NULL);
    /* the classes were exercised, and every prediction is a pressure */
    assert_true(nsu > N / 10 && nss > N / 10);
    for (size_t i = 0; i < nd; i++)
        assert_true(dst[i] >= 0 && dst[i] <= 100);
    for (size_t i = 0; i < ndc; i++)
        assert_true(dst_c[i] >= 0 && dst_c[i] <= 100);
    for (size_t i = 0; i < nsu; i++)
        assert_true(src_u[i] >= 0 && src_u[i] <= 100);
    for (size_t i = 0; i < ndu; i++)
        assert_true(isfinite(dem_u[i]));
    for (size_t i = 0; i < nds; i++)
        assert_true(isfinite(dem_s[i]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_curve_and_inverse),
        cmocka_unit_test(test_demand_recovers_load),
        cmocka_unit_test(test_calibration_converges),
        cmocka_unit_test(test_error_against_kernel_truth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
