/* Unit tests of scenario files (hack/sim/scenario.c) and the quantities they use. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>

#include "hack/sim/quantity_format.h"
#include "hack/sim/scenario.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
#define GiB (1024.0 * 1024 * 1024)
#define MiB (1024.0 * 1024)

static char *path_of(const char *rel)
{
    const char *base = getenv("PSI_TESTDATA");
    assert_non_null(base);
    char *p = malloc(strlen(base) + strlen(rel) + 2);
    sprintf(p, "%s/%s", base, rel);
    return p;
}

static struct scenario *parse(const char *text, char *err, size_t errlen)
{
    return scenario_parse(text, strlen(text), err, errlen);
}

static void test_quantity_format(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(quantity_format_bytes(4 * GiB, buf, sizeof(buf)), "4Gi");
    assert_string_equal(quantity_format_bytes(300 * MiB, buf, sizeof(buf)), "300Mi");
    assert_string_equal(quantity_format_bytes(1500, buf, sizeof(buf)), "1500");
    assert_string_equal(quantity_format_cpu(2, buf, sizeof(buf)), "2");
    assert_string_equal(quantity_format_cpu(0.2, buf, sizeof(buf)), "200m");
    assert_string_equal(quantity_format_cpu(2.0 / 10, buf, sizeof(buf)), "200m");
    assert_string_equal(quantity_format_cpu(0.0001, buf, sizeof(buf)), "1m");
}

static void test_minimal_defaults(void **state)
{
    (void)state;
    char err[256] = "";
    struct scenario *s = parse("name: tiny\nvms:\n- name: vm\n", err, sizeof(err));
    assert_non_null(s);
    assert_string_equal(s->name, "tiny");
    assert_string_equal(s->namespace, "psi-sim");
    assert_int_equal(s->tick_ms, 1000);
    assert_string_equal(s->node_selector, "node-role.kubernetes.io/worker");
    assert_near(s->node_cpus, 0, 0);
    assert_false(s->apply_capacity);
    assert_true(s->psi_without_pool); /* no MCO: PSI is on */
    assert_int_equal(s->cluster_strategy, SCENARIO_STRATEGY_LIVE_MIGRATE);
    assert_int_equal(s->parallel_per_cluster, 5); /* KubeVirt's defaults */
    assert_int_equal(s->parallel_outbound_per_node, 2);
    assert_near(s->cpu_allocation_ratio, 10, 0);
    assert_near(s->model.cpu.burstiness, MODEL_DEFAULT_BURSTINESS, 0);
    assert_int_equal(s->model.cpu.shape, MODEL_SHAPE_KERNEL); /* the fitted curve by default */
    assert_int_equal(s->model.memory.shape, MODEL_SHAPE_QUEUEING);
    assert_int_equal(s->model.io.shape, MODEL_SHAPE_QUEUEING);
    assert_int_equal(s->n_vms, 1);
    const struct scenario_vm *vm = &s->vms[0];
    assert_string_equal(vm->name, "vm");
    assert_int_equal(vm->vcpus, 1);
    assert_near(vm->memory, GiB, 0);
    assert_near(vm->cpu_demand, 0.05, 1e-12);
    assert_near(vm->memory_demand, GiB / 2, 0);
    assert_near(vm->cpu_request, 0.1, 1e-12); /* 1 vCPU / 10 */
    assert_int_equal(vm->strategy, SCENARIO_STRATEGY_UNSET);
    assert_true(vm->migratable);
    assert_null(s->start_node);
    assert_false(s->mco_enabled);
    assert_int_equal(s->n_mco_pools, 1);
    assert_string_equal(s->mco_pools[0], "worker");
    assert_int_equal(s->n_events, 0);
    scenario_free(s);
}

static void test_full_file(void **state)
{
    (void)state;
    char *path = path_of("sim/full.yaml");
    char err[256] = "";
    struct scenario *s = scenario_load(path, err, sizeof(err));
    free(path);
    if (!s)
        fail_msg("%s", err);
    assert_string_equal(s->namespace, "sim-full");
    assert_int_equal(s->seed, 42);
    assert_int_equal(s->tick_ms, 500);
    assert_string_equal(s->node_selector, "type=kwok");
    assert_int_equal(s->node_count, 3);
    assert_near(s->node_cpus, 3.5, 1e-12);
    assert_false(s->apply_capacity);
    assert_near(s->node_memory, 32 * GiB, 0);
    assert_near(s->node_io, 200, 0);
    assert_near(s->node_base_cpu, 0.5, 0);
    assert_false(s->psi_without_pool); /* explicit, and mco is on */
    assert_int_equal(s->model.cpu.shape, MODEL_SHAPE_QUEUEING);
    assert_near(s->model.cpu.burstiness, 0.1, 1e-12);
    assert_near(s->model.memory.full_ratio, 0.3, 1e-12);
    assert_near(s->model.io.full_ratio, 1, 0);
    assert_near(s->model.io.burstiness, MODEL_DEFAULT_BURSTINESS, 0);
    assert_int_equal(s->cluster_strategy, SCENARIO_STRATEGY_LIVE_MIGRATE_IF_POSSIBLE);
    assert_int_equal(s->parallel_per_cluster, 3);
    assert_int_equal(s->parallel_outbound_per_node, 1);
    assert_int_equal(s->restart_delay_ms, 2000);
    assert_int_equal(s->migration_base_ms, 1000);
    assert_near(s->migration_bandwidth, 512 * MiB, 0);
    assert_int_equal(s->migration_phase_delay_ms, 100);
    assert_near(s->migration_failure_rate, 0.25, 0);
    assert_true(scenario_vm_always_fails(s, "db"));
    assert_false(scenario_vm_always_fails(s, "web-0"));
    assert_int_equal(s->migration_backoff_ms, 5000);
    assert_int_equal(s->unschedulable_timeout_ms, 60000);

    /* a group of two expands to web-0, web-1 */
    assert_int_equal(s->n_vms, 3);
    const struct scenario_vm *w1 = scenario_vm_find(s, "web-1");
    assert_non_null(w1);
    assert_string_equal(w1->group, "web");
    assert_int_equal(w1->vcpus, 4);
    assert_near(w1->memory, 8 * GiB, 0);
    assert_near(w1->cpu_demand, 3, 0);
    assert_near(w1->memory_demand, 6 * GiB, 0);
    assert_near(w1->io_demand, 20, 0);
    assert_int_equal(w1->strategy, SCENARIO_STRATEGY_NONE);
    assert_near(w1->cpu_request, 1, 1e-12); /* 4 vCPUs / ratio 4 */
    assert_int_equal(w1->n_labels, 2);
    assert_string_equal(w1->labels[1].key, "tier");
    assert_string_equal(w1->labels[1].value, "1");
    const struct scenario_vm *db = scenario_vm_find(s, "db");
    assert_near(db->memory, 2 * GiB, 0);
    assert_false(db->migratable);
    assert_near(db->cpu_request, 1, 0);
    assert_null(scenario_vm_find(s, "web"));

    assert_string_equal(s->start_node, "worker-1");
    assert_true(s->mco_enabled);
    assert_int_equal(s->n_mco_pools, 2);
    assert_string_equal(s->mco_pools[1], "infra");
    assert_int_equal(s->mco_reboot_delay_ms, 3000);
    assert_int_equal(s->mco_drain_timeout_ms, 120000);

    /* events sorted by time, stable */
    assert_int_equal(s->n_events, 5);
    assert_int_equal(s->events[0].kind, SCENARIO_EVENT_MACHINE_CONFIG);
    assert_string_equal(s->events[0].mc_name, "99-worker-sim");
    assert_string_equal(s->events[0].mc_role, "worker");
    assert_int_equal(s->events[0].n_kernel_args, 2);
    assert_string_equal(s->events[0].kernel_args[1], "schedstats=enable");
    assert_int_equal(s->events[1].kind, SCENARIO_EVENT_DEMAND);
    assert_int_equal(s->events[1].at_ms, 30000);
    assert_int_equal(s->events[1].n_vms, 2);
    assert_string_equal(s->events[1].vms[0], "web-0");
    assert_near(s->events[1].cpu, 0.5, 0);
    assert_true(isnan(s->events[1].memory));
    assert_int_equal(s->events[2].kind, SCENARIO_EVENT_DEMAND);
    assert_string_equal(s->events[2].vms[0], "db");
    assert_near(s->events[2].memory, GiB, 0);
    assert_near(s->events[2].io, 5, 0);
    assert_true(isnan(s->events[2].cpu));
    assert_int_equal(s->events[3].kind, SCENARIO_EVENT_DRAIN);
    assert_string_equal(s->events[3].node, "worker-2");
    assert_int_equal(s->events[3].reboot_delay_ms, 10000);
    assert_int_equal(s->events[4].kind, SCENARIO_EVENT_ROLLING_DRAIN);
    assert_int_equal(s->events[4].reboot_delay_ms, 1000);
    scenario_free(s);
}

/* Every scenario in hack/sim/scenarios parses (whoever wrote it), and the seed one is the
 * seed story. */
static void test_shipped_scenarios(void **state)
{
    (void)state;
    char *dir = path_of("../../hack/sim/scenarios");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int parsed = 0, seed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        char *path = malloc(strlen(dir) + n + 2);
        sprintf(path, "%s/%s", dir, e->d_name);
        char err[512] = "";
        struct scenario *s = scenario_load(path, err, sizeof(err));
        free(path);
        if (!s)
            fail_msg("%s", err);
        parsed++;
        if (strcmp(e->d_name, "seed.yaml") == 0) {
            seed = 1;
            assert_string_equal(s->name, "seed");
            assert_int_equal(s->n_vms, 6);
            int hot = 0;
            for (size_t v = 0; v < s->n_vms; v++) {
                assert_int_equal(s->vms[v].vcpus, 2);
                hot += s->vms[v].cpu_demand >= s->vms[v].vcpus;
            }
            assert_int_equal(hot, 3);
            assert_string_equal(s->start_node, "worker-0");
            assert_int_equal(s->node_count, 3);
        }
        scenario_free(s);
    }
    closedir(d);
    free(dir);
    assert_true(seed);
    assert_true(parsed >= 4); /* seed, rolling-drain, load-shift, mco-psi at least */
}

/* Bad documents are refused with the field named. */
static void test_kubelet_options(void **state)
{
    (void)state;
    char err[256] = "";
    struct scenario *s = parse("name: k\nvms: [{name: a}]\n", err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(s->n_kubelet_no_psi, 0);
    assert_int_equal(s->n_kubelet_slow, 0);
    assert_int_equal(s->kubelet_slow_delay_ms, 30000);
    scenario_free(s);
    s = parse("name: k\nvms: [{name: a}]\nkubelet: {noPsi: [worker-3], slow: [worker-4, worker-5], slowDelay: 1m}\n",
              err, sizeof(err));
    assert_non_null(s);
    assert_int_equal(s->n_kubelet_no_psi, 1);
    assert_string_equal(s->kubelet_no_psi[0], "worker-3");
    assert_int_equal(s->n_kubelet_slow, 2);
    assert_string_equal(s->kubelet_slow[1], "worker-5");
    assert_int_equal(s->kubelet_slow_delay_ms, 60000);
    scenario_free(s);
    assert_null(parse("name: k\nvms: [{name: a}]\nkubelet: {slowDelay: 3}\n", err, sizeof(err)));
    assert_non_null(strstr(err, "kubelet.slowDelay"));
    assert_null(parse("name: k\nvms: [{name: a}]\nkubelet: {nopsi: [a]}\n", err, sizeof(err)));
    assert_non_null(strstr(err, "kubelet.nopsi: unknown field"));
}

/* nodes.sizes: a node's own CPUs and memory over the scenario-wide ones, applied to the Node. */
static void test_node_sizes(void **state)
{
    (void)state;
    char err[256] = "";
    struct scenario *s =
        parse("name: h\nnodes: {memory: 32Gi, sizes: {worker-0: {cpus: 8}, worker-1: {cpus: 2, memory: 4Gi}}}\n"
              "vms: [{name: a}]\n",
              err, sizeof(err));
    assert_non_null(s);
    assert_true(s->apply_capacity); /* sizes are applied like nodes.cpus */
    assert_int_equal(s->n_node_sizes, 2);
    double cpus, mem;
    scenario_node_size(s, "worker-0", &cpus, &mem);
    assert_true(cpus == 8 && mem == 32.0 * 1024 * 1024 * 1024);
    scenario_node_size(s, "worker-1", &cpus, &mem);
    assert_true(cpus == 2 && mem == 4.0 * 1024 * 1024 * 1024);
    scenario_node_size(s, "worker-2", &cpus, &mem); /* unlisted: the node's own CPUs, nodes.memory */
    assert_true(cpus == 0 && mem == 32.0 * 1024 * 1024 * 1024);
    scenario_free(s);
    assert_null(parse("name: h\nnodes: {sizes: [worker-0]}\nvms: [{name: a}]\n", err, sizeof(err)));
    assert_non_null(strstr(err, "nodes.sizes: must be a mapping"));
    assert_null(parse("name: h\nnodes: {sizes: {worker-0: {cpu: 2}}}\nvms: [{name: a}]\n", err, sizeof(err)));
    assert_non_null(strstr(err, "nodes.sizes.worker-0.cpu: unknown field"));
    assert_null(parse("name: h\nnodes: {sizes: {worker-0: {}}}\nvms: [{name: a}]\n", err, sizeof(err)));
    assert_non_null(strstr(err, "nodes.sizes.worker-0: needs cpus or memory"));
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *doc;
        const char *want;
    } cases[] = {
        {"vms: [{name: a}]\n", "name: required"},
        {"name: x\n", "vms: must be a list"},
        {"name: x\nvms: []\n", "vms: must be a list"},
        {"name: x\nvms: [{count: 2}]\n", "vms[0].name: required"},
        {"name: x\nvms: [{name: a, memry: 1Gi}]\n", "vms[0].memry: unknown field"},
        {"name: x\nvms: [{name: a, memory: 4GB}]\n", "vms[0].memory: invalid quantity"},
        {"name: x\nvms: [{name: a, vcpus: 0}]\n", "vms[0].vcpus: must be between"},
        {"name: x\nvms: [{name: a, vcpus: 1.5}]\n", "vms[0].vcpus: must be an integer"},
        {"name: x\nvms: [{name: A_b}]\n", "not a valid VM name"},
        {"name: x\nvms: [{name: a}, {name: a}]\n", "defined twice"},
        {"name: x\nvms: [{name: a, count: 2}, {name: a-1}]\n", "defined twice"},
        {"name: x\nvms: [{name: a, evictionStrategy: Migrate}]\n", "vms[0].evictionStrategy"},
        {"name: x\nvms: [{name: a, cpu: -1}]\n", "vms[0].cpu: must be a non-negative"},
        {"name: x\nvms: [{name: a}]\ntick: 1\n", "tick: must be a duration"},
        {"name: x\nvms: [{name: a}]\ntick: 10ms\n", "tick: must be at least 100ms"},
        {"name: x\nvms: [{name: a}]\nnodes: {cpus: 0}\n", "nodes.cpus: must be positive"},
        {"name: x\nvms: [{name: a}]\nnodes: {applyCapacity: true}\n", "nodes.applyCapacity: needs nodes.cpus"},
        {"name: x\nvms: [{name: a}]\nkubevirt: {parallelMigrationsPerCluster: 0}\n",
         "kubevirt.parallelMigrationsPerCluster: must be between"},
        {"name: x\nvms: [{name: a}]\nkubevirt: {migration: {failureRate: 2}}\n",
         "kubevirt.migration.failureRate: must be a number between 0 and 1"},
        {"name: x\nvms: [{name: a}]\nkubevirt: {migration: {failVMs: [b]}}\n", "failVMs[0]: no VM named \"b\""},
        {"name: x\nvms: [{name: a}]\nmodel: {cpu: {burstiness: 20}}\n", "model.cpu.burstiness: must be at most 10"},
        {"name: x\nvms: [{name: a}]\nmodel: {cpu: {curve: weibull}}\n",
         "model.cpu.curve: \"weibull\" is not one of kernel, queueing"},
        {"name: x\nvms: [{name: a}]\nmodel: {memory: {curve: 3}}\n", "model.memory.curve: must be a string"},
        {"name: x\nvms: [{name: a}]\nevents: [{demand: {vm: a, cpu: 1}}]\n", "events[0].at: required"},
        {"name: x\nvms: [{name: a}]\nevents: [{at: 1s}]\n", "events[0]: needs exactly one of"},
        {"name: x\nvms: [{name: a}]\nevents: [{at: 1s, demand: {vm: b, cpu: 1}}]\n",
         "events[0].demand.vm: no VM named \"b\""},
        {"name: x\nvms: [{name: a}]\nevents: [{at: 1s, demand: {group: z, cpu: 1}}]\n",
         "events[0].demand.group: no VM group named \"z\""},
        {"name: x\nvms: [{name: a}]\nevents: [{at: 1s, demand: {vm: a}}]\n", "events[0].demand: sets nothing"},
        {"name: x\nvms: [{name: a}]\nevents: [{at: 1s, drain: {rebootDelay: 1s}}]\n", "events[0].drain.node: required"},
        {"name: x\nvms: [{name: a}]\nevents: [{at: 1s, drain: {node: w}, rollingDrain: {}}]\n", "needs exactly one of"},
        {"name: x\nvms: [{name: a}]\nevents: [{at: 1s, machineConfig: {name: m}}]\n",
         "events[0].machineConfig.role: required"},
        {"name: x\nvms: [{name: a}]\nfoo: 1\n", "foo: unknown field"},
        {"name: x\nvms: [{name: a}]\nnamespace: Bad_NS\n", "namespace: \"Bad_NS\" is not a valid"},
        {"name: x\nvms: [{name: a}\n", "not valid YAML"},
        {"- a\n- b\n", "must be a mapping"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[512] = "";
        struct scenario *s = parse(cases[i].doc, err, sizeof(err));
        if (s) {
            scenario_free(s);
            fail_msg("case %zu was accepted: %s", i, cases[i].doc);
        }
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: error \"%s\" does not contain \"%s\"", i, err, cases[i].want);
    }
    char err[256];
    assert_null(scenario_load("/nonexistent/x.yaml", err, sizeof(err)));
    assert_non_null(strstr(err, "/nonexistent/x.yaml"));
}

static void test_strategy_names(void **state)
{
    (void)state;
    enum scenario_strategy st;
    assert_int_equal(scenario_strategy_parse("LiveMigrateIfPossible", &st), 0);
    assert_int_equal(st, SCENARIO_STRATEGY_LIVE_MIGRATE_IF_POSSIBLE);
    assert_string_equal(scenario_strategy_name(st), "LiveMigrateIfPossible");
    assert_int_equal(scenario_strategy_parse("livemigrate", &st), -1);
    assert_string_equal(scenario_strategy_name(SCENARIO_STRATEGY_UNSET), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantity_format), cmocka_unit_test(test_minimal_defaults),
        cmocka_unit_test(test_full_file),       cmocka_unit_test(test_shipped_scenarios),
        cmocka_unit_test(test_errors),          cmocka_unit_test(test_kubelet_options),
        cmocka_unit_test(test_strategy_names),  cmocka_unit_test(test_node_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
