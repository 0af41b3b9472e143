/* kubectl-psi: the kubectl / oc plugin of psi-rebalancer (`kubectl psi ...`, `oc psi ...`).
 * Flags and commands, and the wiring of the parts: the cluster's state from cli_source, the
 * views (cli_top, cli_moves, cli_why) on stdout, errors on stderr. Only this file exits. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cli/format.h"
#include "cli/model.h"
#include "cli/moves.h"
#include "cli/source.h"
#include "cli/top.h"
#include "cli/why.h"
#include "psi_build.h"

struct flags {
    const char *kubeconfig, *context, *node, *output;
    bool watch;
    const char *command, *arg;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: kubectl psi COMMAND [ARGS] [flags]\n"
                 "\n"
                 "commands:\n"
                 "  top [NAME]     per node: pressure, thresholds, state and why, utilisation, VMs, moves in and out\n"
                 "                 (NAME: one PsiRebalance; all by default)\n"
                 "  moves [NAME]   recent moves: source -> destination, method, phase, predicted and observed\n"
                 "                 pressure where known, cooldown\n"
                 "  why NODE       why NODE is or is not being relieved right now\n"
                 "\n"
                 "flags:\n"
                 "  -w, --watch            top: follow changes (a watch, not polling) until Ctrl-C\n"
                 "  -o, --output json      top, moves, why: JSON instead of text (top -w: one document per change)\n"
                 "      --node NODE        top: only this node\n"
                 "      --kubeconfig PATH  kubeconfig (default: $KUBECONFIG, then ~/.kube/config)\n"
                 "      --context NAME     kubeconfig context (default: current-context)\n"
                 "      --version          print the version and build\n"
                 "  -h, --help             this help\n"
                 "Colour only on a terminal; NO_COLOR turns it off.\n");
}

static int parse_flags(int argc, char **argv, struct flags *f)
{
    enum { KUBECONFIG = 1, CONTEXT, NODE, VERSION };
    static const struct option opts[] = {
        {"kubeconfig", required_argument, 0, KUBECONFIG},
        {"context", required_argument, 0, CONTEXT},
        {"node", required_argument, 0, NODE},
        {"watch", no_argument, 0, 'w'},
        {"output", required_argument, 0, 'o'},
        {"version", no_argument, 0, VERSION},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "wo:h", opts, NULL)) != -1) {
        switch (c) {
        case KUBECONFIG: f->kubeconfig = optarg; break;
        case CONTEXT: f->context = optarg; break;
        case NODE: f->node = optarg; break;
        case 'w': f->watch = true; break;
        case 'o':
            if (strcmp(optarg, "json") != 0) {
                fprintf(stderr, "kubectl-psi: --output: only json is supported, got '%s'\n", optarg);
                return -1;
            }
            f->output = optarg;
            break;
        case VERSION: printf("kubectl-psi %s (build %s)\n", PSI_VERSION, PSI_BUILD); exit(0);
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return -1;
    }
    f->command = argv[optind++];
    if (optind < argc)
        f->arg = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "kubectl-psi: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    bool top = strcmp(f->command, "top") == 0, moves = strcmp(f->command, "moves") == 0,
         why = strcmp(f->command, "why") == 0;
    if (!top && !moves && !why) {
        fprintf(stderr, "kubectl-psi: unknown command '%s' (top, moves, why)\n", f->command);
        return -1;
    }
    if (why && !f->arg) {
        fprintf(stderr, "kubectl-psi: why needs a NODE\n");
        return -1;
    }
    if ((f->watch || f->node) && !top) {
        fprintf(stderr, "kubectl-psi: %s applies to top only\n", f->watch ? "--watch" : "--node");
        return -1;
    }
    return 0;
}

/* The PsiRebalances of list decoded into a new array of *n; NULL with a message on failure. */
static struct cli_psir *decode_all(const cJSON *list, size_t *n)
{
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"), *it;
    size_t cap = (size_t)cJSON_GetArraySize(items);
    struct cli_psir *ps = calloc(cap ? cap : 1, sizeof(*ps));
    *n = 0;
    if (!ps) {
        fprintf(stderr, "kubectl-psi: out of memory\n");
        return NULL;
    }
    cJSON_ArrayForEach (it, items) {
        char err[256];
        if (cli_psir_decode(it, &ps[*n], err, sizeof(err)) < 0) {
            fprintf(stderr, "kubectl-psi: skipped %s\n", err);
            cli_psir_free(&ps[*n]);
            continue;
        }
        (*n)++;
    }
    return ps;
}

static void free_all(struct cli_psir *ps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cli_psir_free(&ps[i]);
    free(ps);
}

static int print_json(cJSON *doc, bool pretty)
{
    char *s = doc ? (pretty ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc)) : NULL;
    cJSON_Delete(doc);
    if (!s) {
        fprintf(stderr, "kubectl-psi: out of memory\n");
        return -1;
    }
    printf("%s\n", s);
    free(s);
    return 0;
}

struct view {
    const struct flags *flags;
    struct cli_style style;
    bool tty;
    int rc;
};

/* Print the command's view of list and vms once. */
static void show(const cJSON *list, const struct cli_vms *vms, struct view *v)
{
    const struct flags *f = v->flags;
    size_t n;
    struct cli_psir *ps = decode_all(list, &n);
    if (!ps) {
        v->rc = 1;
        return;
    }
    int64_t now = (int64_t)time(NULL);
    bool json = f->output != NULL;
    if (strcmp(f->command, "top") == 0 && json)
        v->rc |= print_json(cli_top_json(ps, n, f->node, vms, now), !f->watch) < 0;
    else if (strcmp(f->command, "top") == 0)
        cli_top_render(stdout, ps, n, f->node, vms, now, &v->style);
    else if (strcmp(f->command, "moves") == 0 && json)
        v->rc |= print_json(cli_moves_json(ps, n, now), true) < 0;
    else if (strcmp(f->command, "moves") == 0)
        cli_moves_render(stdout, ps, n, now, &v->style);
    else {
        struct cli_why w;
        cli_why(ps, n, f->arg, now, &w);
        if (json)
            v->rc |= print_json(cli_why_json(&w, f->arg, now), true) < 0;
        else
            cli_why_render(stdout, &w, f->arg, now, &v->style);
        v->rc |= w.verdict == CLI_VERDICT_NOT_LISTED;
    }
    free_all(ps, n);
}

/* One frame of top -w: the screen cleared on a terminal, a time line in a log. */
static void frame(const cJSON *list, const struct cli_vms *vms, void *ud)
{
    struct view *v = ud;
    if (!v->flags->output) {
        char stamp[32];
        struct tm tm;
        time_t t = time(NULL);
        strftime(stamp, sizeof(stamp), "%H:%M:%S UTC", gmtime_r(&t, &tm) ? &tm : NULL);
        if (v->tty)
            fputs("\033[H\033[2J", stdout);
        printf("kubectl psi top -w (watching; Ctrl-C ends) %s\n\n", stamp);
    }
    show(list, vms, v);
    if (!v->tty && !v->flags->output)
        putchar('\n');
    fflush(stdout);
}

static int run(const struct flags *f)
{
    char err[2048];
    struct cli_source src = {0};
    struct view v = {.flags = f, .tty = isatty(STDOUT_FILENO) == 1};
    v.style = cli_style_detect(v.tty, getenv("NO_COLOR"));
    const char *name = strcmp(f->command, "why") == 0 ? NULL : f->arg;
    if (cli_source_open(&src, f->kubeconfig, f->context, err, sizeof(err)) < 0) {
        fprintf(stderr, "kubectl-psi: %s\n", err);
        return 1;
    }
    cJSON *list = cli_source_psirs(&src, name, err, sizeof(err));
    struct cli_vms vms = {0};
    bool top = strcmp(f->command, "top") == 0; /* the only view that counts VMs */
    if (!list || (top && cli_source_vms(&src, &vms) < 0)) {
        fprintf(stderr, "kubectl-psi: %s\n", list ? "out of memory" : err);
        cJSON_Delete(list);
        cli_vms_free(&vms);
        cli_source_close(&src);
        return 1;
    }
    if (f->watch) {
        frame(list, &vms, &v);
        if (cli_source_watch(&src, name, vms.known, frame, &v, err, sizeof(err)) < 0) {
            fprintf(stderr, "kubectl-psi: %s\n", err);
            v.rc = 1;
        }
    } else {
        show(list, &vms, &v);
    }
    cJSON_Delete(list);
    cli_vms_free(&vms);
    cli_source_close(&src);
    return v.rc;
}

int main(int argc, char **argv)
{
    struct flags f = {0};
    if (parse_flags(argc, argv, &f) < 0)
        return 2;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = run(&f);
    curl_global_cleanup();
    return rc;
}
