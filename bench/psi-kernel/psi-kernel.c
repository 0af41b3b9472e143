/* psi-kernel: measure the running kernel's PSI against known demand.
 *
 * A benchmark, not a test (bench/README.md, "psi-kernel"). For each point it makes a node
 * group /sys/fs/cgroup/unified/<base>/n<k> with one child group per workload, confines the
 * node to 1, 2 or all CPUs with a v1 cpuset group /sys/fs/cgroup/cpuset/<base>/n<k>, starts
 * tasks of known demand in the children and reads, over a window, the growth of every
 * group's cpu.pressure "some"/"full" totals (microseconds stalled per microsecond of wall
 * time), the node group's cpu.stat usage_usec (served CPU) and the mean number of runnable
 * tasks (state R in /proc/<pid>/task/<tid>/stat, sampled every 10 ms), which stands for the
 * run-queue length node_load1 and schedstat report on a real node.
 *
 * A task of duty d and period P spins for a burst of d * P of its own CPU time (uniform in
 * 0.5..1.5 of that), then sleeps to the start of its next period (a random phase at start).
 * When it falls more than a period behind it drops the backlog: a guest's timer-driven work
 * does not queue forever. Shapes:
 *   short  period 4 ms (bursts of ~1-3 ms)
 *   medium period 40 ms (bursts of ~10-30 ms)
 *   mixed  half the tasks short, half medium
 *   vm     two "VMs", processes of 4 and 2 vCPU threads, period 10 ms, one child group each
 *   noisy  a noisy VM (4 vCPU threads, group "noisy") beside a quiet one (group "victim": 1
 *          vCPU thread at a fixed duty 0.1, 0.1 cores), period 10 ms: the noisy VM carries
 *          the rest of the demand, D - 0.1, at duty (D - 0.1) / 4. A point where the noisy VM
 *          would want less than the victim or more than its 4 threads is skipped.
 * A demand D cores (fraction f of capacity C) is split over n = max(2, ceil(D / 0.6)) tasks
 * of duty D / n, spread over two workload groups (w0, w1): w0 has ceil(n / 2) of them, w1
 * floor(n / 2). In vm, each of the 6 threads has duty min(1, D / 6): vm4 wants 4/6 of D, vm2
 * 2/6.
 *
 * Memory: a node group in the v1 memory controller (memory.limit_in_bytes: this kernel's v2
 * hierarchy has no memory controller, so memory.high does not exist there) and in the unified
 * hierarchy (memory.pressure), a task that reads a file-backed working set of W bytes over
 * and over (random 4 KiB pages), with the limit at W / overcommit. Page cache is the only
 * reclaimable working set without swap; anonymous memory above the limit would be killed.
 *
 * Output: CSV on stdout (or --out), a header of '#' lines (kernel, date, cpus, method).
 * It creates and removes only its own groups (<base> = psi-kernel-<pid>), kills its tasks
 * and removes its groups and file on exit or SIGINT/SIGTERM/SIGHUP. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNIFIED "/sys/fs/cgroup/unified"
#define CPUSET "/sys/fs/cgroup/cpuset"
#define MEMCG "/sys/fs/cgroup/memory"
#define MAX_TASKS 64
#define MAX_GROUPS 4
#define VICTIM_DEMAND 0.1 /* cores: the noisy shape's quiet VM */
#define NOISY_THREADS 4

static char base[64];
static pid_t tasks[MAX_TASKS];
static int ntasks;
static char made[64][256]; /* groups made, in creation order */
static int nmade;
static char workfile[512];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "psi-kernel: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int write_file(const char *path, const char *val)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, val, strlen(val));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(val) ? 0 : -1;
}

static int read_file(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return 0;
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static void mkgroup(const char *path)
{
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        die("mkdir %s: %s", path, strerror(errno));
    if (nmade < 64)
        snprintf(made[nmade++], sizeof made[0], "%s", path);
}

static void kill_tasks(void)
{
    for (int i = 0; i < ntasks; i++)
        kill(tasks[i], SIGKILL);
    for (int i = 0; i < ntasks; i++)
        waitpid(tasks[i], NULL, 0);
    ntasks = 0;
}

/* Remove the groups made since mark, newest first (children before parents). */
static void rmgroups(int mark)
{
    for (int i = nmade - 1; i >= mark; i--)
        for (int tries = 0; rmdir(made[i]) < 0 && errno == EBUSY && tries < 100; tries++)
            usleep(10000);
    nmade = mark;
}

static void cleanup(void)
{
    kill_tasks();
    rmgroups(0);
    if (workfile[0])
        unlink(workfile);
}

/* --- the tasks --------------------------------------------------------------------- */

struct shape {
    double duty;     /* CPU share per period, 0..1 */
    double period_s; /* period */
};

static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    struct timespec ts = {(time_t)t, (long)((t - floor(t)) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void *burst_loop(void *arg)
{
    struct shape s = *(struct shape *)arg;
    unsigned seed = (unsigned)(getpid() * 2654435761u) ^ (unsigned)(uintptr_t)pthread_self();
    double next = now_s() + s.period_s * (rand_r(&seed) / (double)RAND_MAX);
    sleep_until(next);
    for (;;) {
        double burst = s.duty * s.period_s * (0.5 + rand_r(&seed) / (double)RAND_MAX);
        double until = thread_cpu_s() + burst;
        while (thread_cpu_s() < until)
            ;
        next += s.period_s;
        double t = now_s();
        if (t < next)
            sleep_until(next);
        else if (t > next + s.period_s)
            next = t; /* more than a period behind: drop the backlog */
    }
    return NULL;
}

/* In a forked child: die with the parent, and move into the unified group and the v1 group
 * (through its v1file, e.g. "tasks" or "cgroup.procs"); exit 3 where either write fails. */
static void join_groups(const char *ugroup, const char *v1group, const char *v1file)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char p[512], me[32];
    snprintf(me, sizeof me, "%d", getpid());
    snprintf(p, sizeof p, "%s/cgroup.procs", ugroup);
    if (write_file(p, me) < 0)
        _exit(3);
    snprintf(p, sizeof p, "%s/%s", v1group, v1file);
    if (write_file(p, me) < 0)
        _exit(3);
}

/* Fork a task of nthreads burst threads into the given unified and v1 groups. */
static void spawn(const char *ugroup, const char *v1group, const char *v1ctl, struct shape s, int nthreads)
{
    if (ntasks >= MAX_TASKS)
        die("too many tasks");
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        join_groups(ugroup, v1group, v1ctl);
        for (int i = 1; i < nthreads; i++) {
            pthread_t t;
            pthread_create(&t, NULL, burst_loop, &s);
        }
        burst_loop(&s);
        _exit(0);
    }
    tasks[ntasks++] = pid;
}

/* --- reading ----------------------------------------------------------------------- */

struct psi_total {
    double some_us, full_us;
};

static int read_psi(const char *group, const char *file, struct psi_total *t)
{
    char p[512], buf[512];
    snprintf(p, sizeof p, "%s/%s", group, file);
    if (read_file(p, buf, sizeof buf) < 0)
        return -1;
    char *s = strstr(buf, "some"), *f = strstr(buf, "full");
    char *st = s ? strstr(s, "total=") : NULL, *ft = f ? strstr(f, "total=") : NULL;
    t->some_us = st ? strtod(st + 6, NULL) : 0;
    t->full_us = ft ? strtod(ft + 6, NULL) : 0;
    return st ? 0 : -1;
}

static double read_usage_us(const char *group)
{
    char p[512], buf[1024];
    snprintf(p, sizeof p, "%s/cpu.stat", group);
    if (read_file(p, buf, sizeof buf) < 0)
        return NAN;
    char *u = strstr(buf, "usage_usec ");
    return u ? strtod(u + 11, NULL) : NAN;
}

static double load1(void)
{
    char buf[128];
    if (read_file("/proc/loadavg", buf, sizeof buf) < 0)
        return NAN;
    return strtod(buf, NULL);
}

/* Runnable (state R) threads of our tasks right now. */
static int runnable_now(void)
{
    int n = 0;
    for (int i = 0; i < ntasks; i++) {
        char p[64];
        snprintf(p, sizeof p, "/proc/%d/task", tasks[i]);
        DIR *d = opendir(p);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char sp[384], buf[512];
            snprintf(sp, sizeof sp, "%s/%s/stat", p, e->d_name);
            if (read_file(sp, buf, sizeof buf) < 0)
                continue;
            char *rp = strrchr(buf, ')');
            if (rp && rp[1] == ' ' && rp[2] == 'R')
                n++;
        }
        closedir(d);
    }
    return n;
}

/* Sleep for window seconds sampling runnable threads every 10 ms; the mean. */
static double sample_runnable(double window)
{
    double end = now_s() + window, sum = 0;
    long k = 0;
    while (!stop && now_s() < end) {
        sum += runnable_now();
        k++;
        usleep(10000);
    }
    return k ? sum / k : NAN;
}

/* --- cpu points -------------------------------------------------------------------- */

struct opts {
    double warmup, window;
    int reps;
    int quick;
    const char *out;
    const char *dir;
    int skip_cpu, skip_memory;
    const char *only_shape; /* --shape: run only this CPU shape */
};

static FILE *out;
static int point_seq;

static void cpu_point(const struct opts *o, int cpus, const char *cpulist, const char *shape, double frac, int rep)
{
    int mark = nmade;
    char node[200], v1[200], w[MAX_GROUPS][256];
    int seq = point_seq++;
    snprintf(node, sizeof node, UNIFIED "/%s/n%d", base, seq);
    snprintf(v1, sizeof v1, CPUSET "/%s/n%d", base, seq);
    mkgroup(node);
    mkgroup(v1);
    char p[512];
    snprintf(p, sizeof p, "%s/cpuset.cpus", v1);
    if (write_file(p, cpulist) < 0)
        die("%s: %s", p, strerror(errno));
    snprintf(p, sizeof p, "%s/cpuset.mems", v1);
    if (write_file(p, "0") < 0)
        die("%s: %s", p, strerror(errno));
    double demand = frac * cpus;
    int ngroups = 2, nthreads_total = 0;
    const char *names[MAX_GROUPS] = {"w0", "w1"};
    if (strcmp(shape, "vm") == 0) {
        names[0] = "vm4";
        names[1] = "vm2";
    } else if (strcmp(shape, "noisy") == 0) {
        names[0] = "noisy";
        names[1] = "victim";
    }
    for (int g = 0; g < ngroups; g++) {
        snprintf(w[g], sizeof w[g], "%s/%s", node, names[g]);
        mkgroup(w[g]);
    }
    if (strcmp(shape, "noisy") == 0) {
        struct shape noisy = {(demand - VICTIM_DEMAND) / NOISY_THREADS, 0.010}, victim = {VICTIM_DEMAND, 0.010};
        spawn(w[0], v1, "tasks", noisy, NOISY_THREADS);
        spawn(w[1], v1, "tasks", victim, 1);
        nthreads_total = NOISY_THREADS + 1;
    } else if (strcmp(shape, "vm") == 0) {
        double duty = fmin(1.0, demand / 6);
        struct shape s = {duty, 0.010};
        spawn(w[0], v1, "tasks", s, 4);
        spawn(w[1], v1, "tasks", s, 2);
        nthreads_total = 6;
    } else {
        int n = (int)ceil(demand / 0.6);
        if (n < 2)
            n = 2;
        double duty = demand / n;
        for (int i = 0; i < n; i++) {
            double period = 0.004;
            if (strcmp(shape, "medium") == 0 || (strcmp(shape, "mixed") == 0 && i % 2))
                period = 0.040;
            struct shape s = {duty, period};
            spawn(w[i % ngroups], v1, "tasks", s, 1);
        }
        nthreads_total = n;
    }
    sleep_until(now_s() + o->warmup);
    struct psi_total a[1 + MAX_GROUPS], b[1 + MAX_GROUPS];
    const char *gs[1 + MAX_GROUPS] = {node, w[0], w[1]};
    double la = load1(), u0[1 + MAX_GROUPS], u1[1 + MAX_GROUPS];
    double t0 = now_s();
    for (int g = 0; g <= ngroups; g++) {
        u0[g] = read_usage_us(gs[g]);
        read_psi(gs[g], "cpu.pressure", &a[g]);
    }
    double runnable = sample_runnable(o->window);
    double t1 = now_s();
    for (int g = 0; g <= ngroups; g++) {
        u1[g] = read_usage_us(gs[g]);
        read_psi(gs[g], "cpu.pressure", &b[g]);
    }
    double wall_us = (t1 - t0) * 1e6;
    for (int g = 0; g <= ngroups && !stop; g++)
        fprintf(out, "cpu,%d,%s,%d,%.2f,%.3f,%d,%s,%.2f,%.2f,%.3f,%.2f,%.2f\n", cpus, shape, nthreads_total, frac,
                demand, rep, g == 0 ? "node" : names[g - 1], 100 * (b[g].some_us - a[g].some_us) / wall_us,
                100 * (b[g].full_us - a[g].full_us) / wall_us, (u1[g] - u0[g]) / wall_us, g == 0 ? runnable : NAN, la);
    fflush(out);
    kill_tasks();
    rmgroups(mark);
}

/* --- memory points ----------------------------------------------------------------- */

static void mem_reader(const char *ugroup, const char *v1group, const char *path, size_t ws)
{
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        join_groups(ugroup, v1group, "cgroup.procs");
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            _exit(4);
        unsigned char *m = mmap(NULL, ws, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            _exit(5);
        madvise(m, ws, MADV_RANDOM);
        unsigned seed = (unsigned)getpid();
        size_t pages = ws / 4096;
        volatile unsigned sink = 0;
        for (;;) {
            size_t i = ((size_t)rand_r(&seed) * (RAND_MAX + 1ul) + (size_t)rand_r(&seed)) % pages;
            sink += m[i * 4096];
        }
    }
    tasks[ntasks++] = pid;
}

static void mem_point(const struct opts *o, size_t ws, double over, int rep)
{
    int mark = nmade;
    int seq = point_seq++;
    char node[256], v1[256], p[512], buf[64];
    snprintf(node, sizeof node, UNIFIED "/%s/m%d", base, seq);
    snprintf(v1, sizeof v1, MEMCG "/%s/m%d", base, seq);
    mkgroup(node);
    mkgroup(v1);
    size_t limit = (size_t)(ws / over);
    snprintf(p, sizeof p, "%s/memory.limit_in_bytes", v1);
    snprintf(buf, sizeof buf, "%zu", limit);
    if (write_file(p, buf) < 0)
        die("%s: %s", p, strerror(errno));
    /* Start cold: the file's pages out of the cache, so they are charged to this group. */
    int fd = open(workfile, O_RDONLY);
    if (fd >= 0) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    mem_reader(node, v1, workfile, ws);
    sleep_until(now_s() + o->warmup * 2);
    struct psi_total a, b, ia, ib;
    double t0 = now_s();
    read_psi(node, "memory.pressure", &a);
    read_psi(node, "io.pressure", &ia);
    sleep_until(t0 + o->window);
    double t1 = now_s();
    read_psi(node, "memory.pressure", &b);
    read_psi(node, "io.pressure", &ib);
    double wall_us = (t1 - t0) * 1e6;
    if (!stop)
        fprintf(out, "memory,0,random-4k,1,%.2f,%zu,%d,node,%.2f,%.2f,%.2f,%.2f,%.2f\n", over, limit, rep,
                100 * (b.some_us - a.some_us) / wall_us, 100 * (b.full_us - a.full_us) / wall_us,
                100 * (ib.some_us - ia.some_us) / wall_us, 100 * (ib.full_us - ia.full_us) / wall_us, load1());
    fflush(out);
    kill_tasks();
    rmgroups(mark);
}

static void make_workfile(const char *dir, size_t ws)
{
    snprintf(workfile, sizeof workfile, "%s/psi-kernel-%d.ws", dir, getpid());
    int fd = open(workfile, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        die("%s: %s", workfile, strerror(errno));
    static char block[1 << 20];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (char)i;
    for (size_t done = 0; done < ws; done += sizeof block)
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
            die("%s: %s", workfile, strerror(errno));
    fsync(fd);
    close(fd);
}

/* --- main -------------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: psi-kernel [--quick] [--reps N] [--window S] [--warmup S] [--out FILE]\n"
                    "                  [--dir DIR (file-backed, for the memory working set; default /var/tmp)]\n"
                    "                  [--no-cpu] [--no-memory] [--shape short|medium|mixed|vm|noisy]\n");
    exit(2);
}

/* Whether a point of shape at demand cores is run: the --shape filter, and the noisy VM's
 * part (demand less the victim's) above the victim's and within its threads. */
static int runs(const struct opts *o, const char *shape, double demand)
{
    if (o->only_shape && strcmp(o->only_shape, shape) != 0)
        return 0;
    if (strcmp(shape, "noisy") != 0)
        return 1;
    double noisy = demand - VICTIM_DEMAND;
    return noisy > VICTIM_DEMAND && noisy <= NOISY_THREADS;
}

static int missing(const char *path)
{
    if (exists(path))
        return 0;
    fprintf(stderr, "psi-kernel: %s is missing: skipping what needs it\n", path);
    return 1;
}

int main(int argc, char **argv)
{
    struct opts o = {.warmup = 0.5, .window = 2.5, .reps = 3, .dir = "/var/tmp"};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            o.quick = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            o.reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--window") && i + 1 < argc)
            o.window = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            o.warmup = atof(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            o.out = argv[++i];
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            o.dir = argv[++i];
        else if (!strcmp(argv[i], "--no-cpu"))
            o.skip_cpu = 1;
        else if (!strcmp(argv[i], "--no-memory"))
            o.skip_memory = 1;
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc)
            o.only_shape = argv[++i];
        else
            usage();
    }
    static const char *const shapes[] = {"short", "medium", "mixed", "vm", "noisy"};
    int known = !o.only_shape;
    for (int i = 0; i < 5 && !known; i++)
        known = strcmp(o.only_shape, shapes[i]) == 0;
    if (!known)
        usage();
    if (o.only_shape) /* one CPU shape asked for: no memory points */
        o.skip_memory = 1;
    if (o.quick) {
        o.reps = 2;
        o.window = 2.0;
    }
    if (o.reps < 1 || o.reps > 20 || !(o.window >= 0.5 && o.window <= 60) || !(o.warmup >= 0 && o.warmup <= 10))
        die("--reps must be 1..20, --window 0.5..60 s, --warmup 0..10 s");
    if (missing(UNIFIED "/cpu.pressure"))
        return 0;
    if (missing(CPUSET "/cpuset.cpus"))
        o.skip_cpu = 1;
    if (!o.skip_memory && (missing(MEMCG "/memory.limit_in_bytes") || missing(UNIFIED "/memory.pressure")))
        o.skip_memory = 1;
    if (!o.skip_memory && !exists(UNIFIED "/memory.high"))
        fprintf(stderr, "psi-kernel: " UNIFIED "/memory.high is missing (no v2 memory controller): the memory "
                        "points use the v1 memory.limit_in_bytes\n");

    out = o.out ? fopen(o.out, "w") : stdout;
    if (!out)
        die("%s: %s", o.out, strerror(errno));
    snprintf(base, sizeof base, "psi-kernel-%d", getpid());
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    atexit(cleanup);

    char p[512];
    snprintf(p, sizeof p, UNIFIED "/%s", base);
    mkgroup(p);
    if (!o.skip_cpu) {
        snprintf(p, sizeof p, CPUSET "/%s", base);
        mkgroup(p);
        char cpus[64] = "", mems[64] = "";
        read_file(CPUSET "/cpuset.cpus", cpus, sizeof cpus);
        read_file(CPUSET "/cpuset.mems", mems, sizeof mems);
        snprintf(p, sizeof p, CPUSET "/%s/cpuset.cpus", base);
        write_file(p, cpus);
        snprintf(p, sizeof p, CPUSET "/%s/cpuset.mems", base);
        write_file(p, mems);
    }
    if (!o.skip_memory) {
        snprintf(p, sizeof p, MEMCG "/%s", base);
        mkgroup(p);
    }

    struct utsname u;
    uname(&u);
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(out, "# psi-kernel: the kernel's PSI against known demand\n");
    fprintf(out, "# kernel: %s %s %s\n# date: %s\n# cpus online: %ld\n# load1 at start: %.2f\n", u.sysname, u.release,
            u.machine, date, ncpu, load1());
    fprintf(out,
            "# method: per point a node group (unified hierarchy, own cpu.pressure) with child groups, confined"
            " by a v1 cpuset; some/full = growth of the groups' pressure totals over a %.1f s window after %.1f s"
            " of warm-up, %d repetitions; usage = the group's cpu.stat usage_usec / wall (cores); runnable = mean"
            " threads in state R (10 ms samples). Memory: v1 memory.limit_in_bytes = working set / overcommit,"
            " random 4 KiB reads of a file-backed working set; columns usage/runnable hold io some/full %%.\n",
            o.window, o.warmup, o.reps);
    fprintf(out, "kind,cpus,shape,threads,demand_fraction,demand,rep,group,some_pct,full_pct,usage_cores,runnable,"
                 "load1\n");
    fflush(out);

    static const double full_fracs[] = {0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.5, 2.0, 2.5};
    static const double quick_fracs[] = {0.3, 0.7, 0.9, 1.0, 1.2, 2.0};
    const double *fracs = o.quick ? quick_fracs : full_fracs;
    int nfracs = o.quick ? 6 : 12;
    /* 1 CPU with three burst shapes, 2 CPUs, all CPUs with the VMs, and the noisy VM beside
     * its victim on 1 and 2 CPUs; the sets past the first three need 2 CPUs online. */
    char all[32];
    snprintf(all, sizeof all, "0-%ld", ncpu - 1);
    struct {
        int cpus;
        const char *list;
        const char *shape;
    } sets[] = {{1, "1", "short"},      {1, "1", "medium"}, {1, "1", "mixed"},  {2, "0-1", "mixed"},
                {(int)ncpu, all, "vm"}, {1, "1", "noisy"},  {2, "0-1", "noisy"}};
    int nsets = ncpu >= 2 ? 7 : 3;
    if (!o.skip_cpu)
        for (int s = 0; s < nsets && !stop; s++)
            for (int f = 0; f < nfracs && !stop; f++)
                for (int r = 0; r < o.reps && !stop && runs(&o, sets[s].shape, fracs[f] * sets[s].cpus); r++)
                    cpu_point(&o, sets[s].cpus, sets[s].list, sets[s].shape, fracs[f], r);
    if (!o.skip_memory && !stop) {
        size_t ws = (size_t)(o.quick ? 128 : 256) << 20;
        make_workfile(o.dir, ws);
        static const double overs[] = {0.5, 0.9, 1.0, 1.05, 1.1, 1.25, 1.5, 2.0, 3.0};
        for (int i = 0; i < 9 && !stop; i++)
            for (int r = 0; r < (o.reps < 2 ? o.reps : 2) && !stop; r++)
                mem_point(&o, ws, overs[i], r);
    }
    if (o.out)
        fclose(out);
    return stop ? 130 : 0;
}
