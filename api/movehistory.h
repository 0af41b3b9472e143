/* movehistory: what the oscillation hold and the move budgets remember of the moves within
 * spec.eviction.cooldown.history (status.moveHistory). The status is the record: the operator
 * reads it back after a restart, so the hold and the budgets survive one. status.moves, the
 * list a person reads, keeps 50 moves; this keeps what the rules need of every move in the
 * window, at any move rate, in a form that does not grow with the rate:
 *
 *   per workload (its history key, "Kind ns/name"):
 *     moved      the times of its moves, the newest API_MOVE_HISTORY_MAX_TIMES (the per-workload
 *                budget, spec.eviction.maxMovesPerWorkload, is at most that many);
 *     left       each node it left and when, the latest time per node, the newest
 *                API_MOVE_HISTORY_MAX_LEFT nodes (a move leaves one node: no more than its moves);
 *     unhelpful  when its last move was found not to have helped (budget.h), or 0;
 *   per node pair: the latest time load was sent from one node to the other.
 *
 * A move adds one time to its workload (growing it by at most 11 bytes), at most one left
 * entry and at most one pair: its size follows the workloads and node pairs that moved within
 * the window, not how often they moved. Times are Unix seconds.
 *
 * Bounds: api_move_history_prune forgets every fact older than what it is given (the operator
 * gives the window, or the last hour when the window is shorter: the hour's budget). Past
 * API_MOVE_HISTORY_MAX_BYTES of JSON (api_move_history_bound), the oldest facts go first,
 * whatever they are: the oldest ones are the holds that would end soonest, so they are what the
 * hold needs least. The decoder refuses a status over its count and length bounds before it
 * allocates, and a malformed entry makes the whole record refused with an error naming it.
 *
 * JSON (unformatted, as encoded; empty parts left out):
 *   {"workloads":[{"workload":"VirtualMachineInstance ns/vm","moved":[1767225600],
 *                  "left":{"node-a":1767225600},"unhelpful":1767226200}],
 *    "sent":{"node-a>node-b":1767225600}}
 * Owns its strings and arrays; zero-initialise, release with api_move_history_release. */
#ifndef PSI_API_MOVEHISTORY_H
#define PSI_API_MOVEHISTORY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/errors.h"

/* The most JSON status.moveHistory takes. */
#define API_MOVE_HISTORY_MAX_BYTES (128 * 1024)
/* Move times kept per workload (the newest). */
#define API_MOVE_HISTORY_MAX_TIMES 16
/* Nodes left kept per workload (the latest). */
#define API_MOVE_HISTORY_MAX_LEFT 16
/* Decoder bounds: entries, and the longest workload key and node name. */
#define API_MOVE_HISTORY_MAX_WORKLOADS 8192
#define API_MOVE_HISTORY_MAX_PAIRS 16384
#define API_MOVE_HISTORY_MAX_KEY 600
#define API_MOVE_HISTORY_MAX_NODE 253

struct api_move_left {
    char *node;
    int64_t at; /* the latest time the workload left node */
};

struct api_move_workload {
    char *key;
    int64_t moved[API_MOVE_HISTORY_MAX_TIMES]; /* ascending */
    size_t nmoved;
    struct api_move_left left[API_MOVE_HISTORY_MAX_LEFT]; /* one per node */
    size_t nleft;
    int64_t unhelpful; /* 0: none */
};

struct api_move_pair {
    char *key;  /* "source>destination" */
    int64_t at; /* the latest time load went from source to destination */
};

struct api_move_history {
    struct api_move_workload *workloads; /* sorted by key */
    size_t nworkloads, workloads_cap;
    struct api_move_pair *pairs; /* sorted by key */
    size_t npairs, pairs_cap;
};

/* Record a move of workload key from source to destination (NULL: not known yet) at at.
 * Returns 0, or -1 on no memory (then possibly only part of it is recorded). */
int api_move_history_record(struct api_move_history *mh, const char *key, const char *source, const char *destination,
                            int64_t at);

/* Record that load went from source to destination at at (a move's landing learnt later). */
int api_move_history_sent(struct api_move_history *mh, const char *source, const char *destination, int64_t at);

/* Mark workload key's last move as one that did not help, at at. Returns 0, or -1 on no memory. */
int api_move_history_mark_unhelpful(struct api_move_history *mh, const char *key, int64_t at);

/* Workload key's entry, or NULL. */
const struct api_move_workload *api_move_history_workload(const struct api_move_history *mh, const char *key);

/* When workload key last left node, or 0. */
int64_t api_move_history_left_at(const struct api_move_history *mh, const char *key, const char *node);

/* When load last went from source to destination, or 0. */
int64_t api_move_history_sent_at(const struct api_move_history *mh, const char *source, const char *destination);

/* Moves at or after since: of workload key, or of every workload when key is NULL. */
size_t api_move_history_moves_since(const struct api_move_history *mh, const char *key, int64_t since);

/* Forget every fact older than before, and the workloads left without any. */
void api_move_history_prune(struct api_move_history *mh, int64_t before);

/* Bytes of mh's JSON, unformatted (exactly what api_move_history_encode prints). */
size_t api_move_history_bytes(const struct api_move_history *mh);

/* Drop the oldest facts until mh's JSON takes at most max_bytes. Returns the facts' cut-off
 * (facts before it were dropped), or 0 when nothing was. */
int64_t api_move_history_bound(struct api_move_history *mh, size_t max_bytes);

/* Whether mh holds nothing. */
bool api_move_history_empty(const struct api_move_history *mh);

/* mh as JSON (caller owns it); NULL on no memory. */
cJSON *api_move_history_encode(const struct api_move_history *mh);

/* Decode json (status.moveHistory, at path) into *mh, replacing its content. All or nothing:
 * on any error (named in errs) mh is left empty and -1 returned; unknown fields go to warns. */
int api_move_history_decode(const cJSON *json, const char *path, struct api_move_history *mh, struct api_errors *errs,
                            struct api_errors *warns);

/* Make dst (empty) a deep copy of src. Returns 0, or -1 on no memory (dst empty). */
int api_move_history_copy(struct api_move_history *dst, const struct api_move_history *src);

/* Whether a and b hold the same facts. */
bool api_move_history_equal(const struct api_move_history *a, const struct api_move_history *b);

/* Release what mh owns and zero it. */
void api_move_history_release(struct api_move_history *mh);

#endif
