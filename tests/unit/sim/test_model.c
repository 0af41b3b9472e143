/* Unit tests of the simulator's PSI model (hack/sim/model.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hack/sim/model.h"

/* cmocka 1.1.5 compares floats only; doubles within eps: */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#define S MODEL_DEFAULT_BURSTINESS

/* Well below saturation the pressure is practically zero. */
static void test_near_zero_below_saturation(void **state)
{
    (void)state;
    for (double rho = 0.0; rho <= 0.6 + 1e-9; rho += 0.05) {
        double p = model_pressure(rho * 16, 16, S);
        assert_true(p >= 0);
        assert_true(p < 0.001);
    }
    assert_true(model_pressure(0, 16, S) == 0);
}

/* It rises steeply towards saturation: the slope grows, and at D = C it is s * phi(0). */
static void test_steep_towards_saturation(void **state)
{
    (void)state;
    double at60 = model_pressure(0.6 * 4, 4, S);
    double at80 = model_pressure(0.8 * 4, 4, S);
    double at90 = model_pressure(0.9 * 4, 4, S);
    double at100 = model_pressure(4, 4, S);
    assert_true(at60 < at80 && at80 < at90 && at90 < at100);
    /* the last 10 % of load adds more pressure than the 20 % before it */
    assert_true(at100 - at90 > at90 - at80);
    assert_true(at90 - at80 > at80 - at60);
    assert_near(at100, S / sqrt(2 * M_PI), 1e-9);
    assert_true(at100 > 0.09 && at100 < 0.11); /* about 10 % with the default burstiness */
}

/* Above saturation it approaches 1 - C/D, the share of demand that must wait. */
static void test_share_that_waits_above_saturation(void **state)
{
    (void)state;
    double ratios[] = {1.5, 2, 3, 4, 8};
    for (size_t i = 0; i < sizeof(ratios) / sizeof(ratios[0]); i++) {
        double d = ratios[i] * 4;
        double p = model_pressure(d, 4, S);
        double want = 1 - 4 / d;
        assert_true(p >= want);       /* fluctuations only add waiting */
        assert_true(p - want < 0.02); /* and not much, well above saturation */
    }
    /* the seed scenario's hot node: 6 busy cores on 4 CPUs */
    double seed = model_pressure(6, 4, S);
    assert_true(seed > 0.33 && seed < 0.36);
}

static void test_monotonic_and_bounded(void **state)
{
    (void)state;
    double prev = 0;
    for (double d = 0; d <= 64; d += 0.01) {
        double p = model_pressure(d, 8, S);
        assert_true(p >= prev - 1e-12);
        assert_true(p >= 0 && p <= 1);
        prev = p;
    }
}

static void test_deterministic_without_burstiness(void **state)
{
    (void)state;
    assert_near(model_pressure(3, 4, 0), 0, 0);
    assert_near(model_pressure(4, 4, 0), 0, 0);
    assert_near(model_pressure(8, 4, 0), 0.5, 1e-12);
}

static void test_edge_inputs(void **state)
{
    (void)state;
    assert_near(model_pressure(-1, 4, S), 0, 0);
    assert_near(model_pressure(1, 0, S), 1, 0);
    assert_near(model_pressure(0, 0, S), 0, 0);
    assert_near(model_pressure(NAN, 4, S), 0, 0);
    assert_near(model_pressure(4, NAN, S), 0, 0);
    assert_near(model_pressure(1e12, 1, S), 1 - 1e-12, 1e-9);
}

static void test_node(void **state)
{
    (void)state;
    struct model_params p;
    model_params_default(&p);
    p.cpu.shape = MODEL_SHAPE_QUEUEING;
    struct model_node_in in = {
        .cpus = 4,
        .cpu_demand = 6,
        .memory = 64.0 * (1 << 30),
        .memory_demand = 8.0 * (1 << 30),
        .io = 1000,
        .io_demand = 2000,
    };
    struct model_node_out out;
    model_node(&p, &in, &out);
    assert_near(out.cpu_some, model_pressure(6, 4, S), 1e-12);
    assert_true(out.memory_some < 0.001 && out.memory_full <= out.memory_some);
    assert_near(out.io_full, out.io_some * MODEL_DEFAULT_FULL_RATIO, 1e-12);
    assert_true(out.io_some > 0.49);
    /* the served CPU never exceeds the capacity: D * (1 - some) <= C (within fluctuation) */
    assert_true(in.cpu_demand * out.cpu_served <= in.cpus + 1e-9);
    assert_near(out.cpu_served, 1 - out.cpu_some, 1e-12);

    p.memory.full_ratio = 0;
    in.memory_demand = 128.0 * (1 << 30);
    model_node(&p, &in, &out);
    assert_true(out.memory_some > 0.49);
    assert_near(out.memory_full, 0, 0);
}

/* The fitted kernel curve against bench/psi-kernel's means (bench/README.md): within the
 * measured range of the shapes' means at full load and past it, rising, and 0..1. */
static void test_kernel_curve(void **state)
{
    (void)state;
    double at10 = model_kernel_cpu_some(1.0, 1), at12 = model_kernel_cpu_some(2.4, 2);
    assert_true(at10 >= 0.68 && at10 <= 0.88); /* 68-88 % measured at full load */
    assert_true(at12 >= 0.90 && at12 <= 0.97); /* 90-97 % at 1.2 */
    assert_true(model_kernel_cpu_some(1.5, 1) >= 0.99);
    assert_true(model_kernel_cpu_some(0.3, 1) < 0.05);
    double prev = 0;
    for (double L = 0.05; L <= 4; L += 0.05) {
        double p = model_kernel_cpu_some(L * 8, 8);
        assert_true(p >= prev && p <= 1);
        prev = p;
    }
    assert_near(model_kernel_cpu_some(0, 4), 0, 0);
    assert_near(model_kernel_cpu_some(NAN, 4), 0, 0);
    assert_near(model_kernel_cpu_some(1, 0), 1, 0);
}

/* The default cpu curve is the kernel's; each VM then gets min(D, C) / D of its demand, for
 * every demand and capacity (not 1 - some, which the kernel's some does not measure). */
static void test_node_kernel_default(void **state)
{
    (void)state;
    struct model_params p;
    model_params_default(&p);
    assert_int_equal(p.cpu.shape, MODEL_SHAPE_KERNEL);
    assert_int_equal(p.memory.shape, MODEL_SHAPE_QUEUEING);
    assert_int_equal(p.io.shape, MODEL_SHAPE_QUEUEING);
    for (double cpus = 1; cpus <= 64; cpus *= 2)
        for (double d = 0; d <= 3 * cpus; d += cpus / 16) {
            struct model_node_in in = {.cpus = cpus, .cpu_demand = d, .memory = 1, .memory_demand = 0.5};
            struct model_node_out out;
            model_node(&p, &in, &out);
            assert_near(out.cpu_some, model_kernel_cpu_some(d, cpus), 0);
            double served = d > cpus ? cpus / d : 1;
            assert_near(out.cpu_served, served, 1e-12);
            assert_true(d * out.cpu_served <= cpus + 1e-9);
            assert_near(out.memory_some, model_pressure(0.5, 1, MODEL_DEFAULT_BURSTINESS), 0);
        }
}

/* The curve names a scenario may give. */
static void test_shape_parse(void **state)
{
    (void)state;
    enum model_shape s = MODEL_SHAPE_QUEUEING;
    assert_int_equal(model_shape_parse("kernel", &s), 0);
    assert_int_equal(s, MODEL_SHAPE_KERNEL);
    assert_int_equal(model_shape_parse("queueing", &s), 0);
    assert_int_equal(s, MODEL_SHAPE_QUEUEING);
    assert_int_equal(model_shape_parse("Kernel", &s), -1);
    assert_int_equal(model_shape_parse("", &s), -1);
    assert_int_equal(s, MODEL_SHAPE_QUEUEING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_near_zero_below_saturation),
        cmocka_unit_test(test_steep_towards_saturation),
        cmocka_unit_test(test_share_that_waits_above_saturation),
        cmocka_unit_test(test_monotonic_and_bounded),
        cmocka_unit_test(test_deterministic_without_burstiness),
        cmocka_unit_test(test_edge_inputs),
        cmocka_unit_test(test_node),
        cmocka_unit_test(test_kernel_curve),
        cmocka_unit_test(test_node_kernel_default),
        cmocka_unit_test(test_shape_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
