/* kubelet_probe: sample the kubelet Summary source through the API server for the nodes
 * named on the command line, with the config kube_config_load finds ($KUBECONFIG or the
 * in-cluster environment), and print the outcome for kubelet_e2e.sh:
 *   STATUS ok|failed <reason> <message>
 *   NODE <name> <cpu> <memory> <io> <why>  (a percent or Unknown; why: the reason the
 *                                          node could not be read, or -)
 *   NODE_ERRORS <n> <first error>
 * Exits 0 whatever the sample says; 2 when the config or client cannot be made. */
#include <stdio.h>
#include <stdlib.h>

#include "e2e_util.h"
#include "kube/config.h"
#include "kube/rest.h"
#include "psi/kubelet.h"

int main(int argc, char **argv)
{
    struct kube_config *cfg = NULL;
    struct kube_client *c = e2e_kube_client("kubelet_probe", NULL, &cfg);
    if (!c)
        return 2;
    kube_client_set_timeout(c, 10000);
    struct kube_err st;
    struct psi_source *src = psi_kubelet_source_new(c, &st);
    size_t n = (size_t)(argc - 1);
    struct psi_node_desc *nodes = calloc(n ? n : 1, sizeof(*nodes));
    for (size_t i = 0; i < n; i++)
        nodes[i].name = argv[i + 1];
    struct psi_request req = {nodes, n, 0, 0, 60, 0};
    struct psi_sample s;
    psi_source_sample(src, &req, &s);
    printf("STATUS %s %s %s\n", kube_err_failed(&s.status) ? "failed" : "ok",
           kube_err_failed(&s.status) ? s.status.reason : "-", s.status.msg);
    for (size_t i = 0; i < s.n_nodes; i++) {
        printf("NODE %s", s.nodes[i].name);
        for (int r = 0; r < PSI_NRESOURCES; r++) {
            if (s.nodes[i].value[r].known)
                printf(" %.2f", s.nodes[i].value[r].percent);
            else
                printf(" Unknown");
        }
        printf(" %s\n", s.nodes[i].unread ? s.nodes[i].unread : "-");
    }
    printf("NODE_ERRORS %zu %s\n", s.n_node_errors, s.node_error);
    psi_sample_free(&s);
    psi_source_free(src);
    free(nodes);
    kube_client_free(c);
    kube_config_free(cfg);
    return 0;
}
