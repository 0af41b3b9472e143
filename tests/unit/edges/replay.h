/* replay: a kube_transport (kube/transport.h) that answers a client's requests from replies
 * recorded from a real API server (tests/testdata/replies/<name>.json, written by
 * tests/record/record_replies.py; $PSI_TESTDATA names tests/testdata).
 *
 * A test queues the replies it expects, in order (replay_expect); each request the client
 * sends takes the next one, and must have the recorded request's method and path (the query
 * aside): a request out of turn, or one too many, fails the test. replay_done checks that
 * every queued reply was asked for. The requests sent are kept for the test to read. */
#ifndef PSI_TEST_REPLAY_H
#define PSI_TEST_REPLAY_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/config.h"
#include "kube/rest.h"

#define REPLAY_MAX 16

/* One request the client sent. */
struct replay_sent {
    char *method, *path, *body; /* body NULL: none */
};

struct replay {
    struct kube_config cfg; /* a config naming no reachable server: nothing leaves the process */
    struct kube_client *client;
    cJSON *queued[REPLAY_MAX]; /* the recordings, in order */
    size_t nqueued, next;
    struct replay_sent sent[REPLAY_MAX];
};

/* Set up r and its client, whose requests r answers. */
void replay_init(struct replay *r);

/* Queue the recording called name. */
void replay_expect(struct replay *r, const char *name);

/* The recorded reply body of name, parsed (caller frees). */
cJSON *replay_reply_body(const char *name);

/* Fail unless every queued reply was asked for. */
void replay_done(const struct replay *r);

/* Free r's client, recordings and kept requests. */
void replay_release(struct replay *r);

#endif
