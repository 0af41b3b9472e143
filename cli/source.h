/* cli_source: where kubectl-psi gets the cluster's state (the edge: every API call of the
 * plugin is here). The kubeconfig as kubectl finds it (--kubeconfig, --context, KUBECONFIG,
 * ~/.kube/config), one GET of the PsiRebalances and of the VirtualMachineInstances for a
 * snapshot, and for -w two informers (watches, not polling) that call back on every change.
 * Failures come back as a sentence (cli_errors). */
#ifndef PSI_CLI_SOURCE_H
#define PSI_CLI_SOURCE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli/model.h"
#include "kube/config.h"
#include "kube/rest.h"

/* A connection to the API server; zero-initialise, open, close. */
struct cli_source {
    struct kube_config *cfg;
    struct kube_client *client;
};

/* Load the kubeconfig (path and context may be NULL) and make a client. Returns 0, or -1
 * with a sentence in err. */
int cli_source_open(struct cli_source *s, const char *kubeconfig, const char *context, char *err, size_t len);

/* Release the client and config (an unopened source is fine). */
void cli_source_close(struct cli_source *s);

/* The PsiRebalances (all, or the one named name) as a list object with "items" sorted by
 * name; NULL with a sentence in err (CRD absent, not found, forbidden, ...). The caller frees. */
cJSON *cli_source_psirs(struct cli_source *s, const char *name, char *err, size_t len);

/* The VirtualMachineInstances counted per node into *vms (zeroed before). Their absence (no
 * KubeVirt API) or a refusal leaves vms->known false: counts are optional. Returns 0, or -1 on
 * no memory. */
int cli_source_vms(struct cli_source *s, struct cli_vms *vms);

/* Called by cli_source_watch after changes (coalesced over CLI_SOURCE_REDRAW_MS): list is
 * the PsiRebalances as cli_source_psirs returns them (borrowed), vms the VM counts. */
typedef void (*cli_source_draw_fn)(const cJSON *list, const struct cli_vms *vms, void *ud);

/* Changes closer together than this are drawn once. */
#define CLI_SOURCE_REDRAW_MS 200

/* Follow the PsiRebalances (all, or name) and, when with_vms, the VirtualMachineInstances
 * through watches, calling draw after each change, until SIGINT or SIGTERM. Returns 0, or
 * -1 with a sentence in err. */
int cli_source_watch(struct cli_source *s, const char *name, bool with_vms, cli_source_draw_fn draw, void *ud,
                     char *err, size_t len);

#endif
