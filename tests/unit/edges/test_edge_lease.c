/* Unit tests of the election's Lease (kube_lease_tick) through the transport seam, answered
 * by the API server's recorded replies (replay.h): no Lease yet is a create, a create that
 * loses the race (409 AlreadyExists) leaves us following, a renewal that meets a newer
 * Lease (409 Conflict) leads on until the renew deadline, a Lease another holder keeps is waited on. The e2e test
 * leader_election keeps two real replicas contending. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "kube/lease.h"
#include "replay.h"

#define NS "psi-record"
#define NAME "psi-record-lease"
#define HOLDER "psi-rebalancer-other" /* the holder the recorded Lease names */

static struct kube_lease *lease(struct replay *r, const char *identity)
{
    struct kube_err err;
    struct kube_lease *l = kube_lease_new(r->client, NS, NAME, identity, NULL, &err);
    assert_non_null(l);
    return l;
}

static void test_absent_lease_is_created(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "lease_get_missing");
    replay_expect(&r, "lease_create");
    struct kube_lease *l = lease(&r, HOLDER);
    struct kube_err err;
    assert_int_equal(kube_lease_tick(l, 1000, NULL, &err), KUBE_LEASE_LEADER);
    replay_done(&r);
    assert_string_equal(kube_lease_holder(l), HOLDER);
    kube_lease_free(l);
    replay_release(&r);
}

static void test_lost_create_race_follows(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "lease_get_missing");
    replay_expect(&r, "lease_create_exists");
    struct kube_lease *l = lease(&r, "psi-rebalancer-me");
    struct kube_err err;
    assert_int_equal(kube_lease_tick(l, 1000, NULL, &err), KUBE_LEASE_FOLLOWER);
    replay_done(&r);
    assert_int_equal(err.status, 409);
    assert_string_equal(err.reason, "AlreadyExists");
    kube_lease_free(l);
    replay_release(&r);
}

static void test_held_lease_is_waited_on(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "lease_get"); /* no write follows: the holder's lease runs on our clock */
    struct kube_lease *l = lease(&r, "psi-rebalancer-me");
    struct kube_err err;
    assert_int_equal(kube_lease_tick(l, 1000, NULL, &err), KUBE_LEASE_FOLLOWER);
    replay_done(&r);
    assert_string_equal(kube_lease_holder(l), HOLDER);
    kube_lease_free(l);
    replay_release(&r);
}

static void test_renewal_conflict_leads_until_the_deadline(void **state)
{
    (void)state;
    struct replay r;
    replay_init(&r);
    replay_expect(&r, "lease_get_missing");
    replay_expect(&r, "lease_create");
    replay_expect(&r, "lease_get");
    replay_expect(&r, "lease_update_conflict");
    replay_expect(&r, "lease_get");
    struct kube_lease_timing t = {15000, 10000, 2000};
    struct kube_err err;
    struct kube_lease *l = kube_lease_new(r.client, NS, NAME, HOLDER, &t, &err);
    assert_non_null(l);
    assert_int_equal(kube_lease_tick(l, 1000, NULL, &err), KUBE_LEASE_LEADER);
    /* the renewal meets a Lease written since: still leading, until the renew deadline */
    assert_int_equal(kube_lease_tick(l, 3000, NULL, &err), KUBE_LEASE_LEADER);
    assert_int_equal(err.status, 409);
    assert_string_equal(err.reason, "Conflict");
    /* past the deadline without a renewal: step down, with no write. Two seconds past it, and
     * before the lease itself would expire: the last renewal's time is the caller's clock plus
     * the real time the first GET took, which a loaded machine stretches */
    assert_int_equal(kube_lease_tick(l, 1000 + 10000 + 2000, NULL, &err), KUBE_LEASE_LOST);
    replay_done(&r);
    kube_lease_free(l);
    replay_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absent_lease_is_created),
        cmocka_unit_test(test_lost_create_race_follows),
        cmocka_unit_test(test_held_lease_is_waited_on),
        cmocka_unit_test(test_renewal_conflict_leads_until_the_deadline),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}
