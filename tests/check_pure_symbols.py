#!/usr/bin/env python3
"""The link-time check of the pure libraries: no network, clock or file call in them.

A pure library (the decisions of controller/reconcile, api/, base/) takes plain data in and
gives plain data out; the edges do the I/O. This reads the undefined symbols of every object
in the pure archives (nm -u) and fails when one of them is

  - a C library or system function that talks to the network, reads a clock, touches a file
    or a process (socket, connect, poll, clock_gettime, time, open, read, write, fopen,
    fprintf, stderr, fork, ...), or a call into libcurl, OpenSSL or libwebsockets;
  - a function defined, in the dependency archives given with --deps, by an object that
    makes such a call or calls such a function: the project's own edges (kube_rest_*,
    psi_kubelet_fetch, base_mono_ms, log_at, ...), found without a list of names. An object is the unit nm
    sees, so a pure function that shares its file with an edge counts as the edge; the few
    that do are in SHARED_FILE below, each with its reason.

Memory, string, formatting into buffers (snprintf), sorting, math and time conversions
(gmtime_r, timegm, strftime: no clock is read) are allowed.

  check_pure_symbols.py --nm NM --pure A.a [--pure B.a ...] [--deps C.a ...]

Exit status 0 when clean, 1 with one line per finding (archive, object, symbol, why).
"""
import argparse
import re
import subprocess
import sys

NETWORK = {
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "send", "sendto",
    "sendmsg", "sendmmsg", "recv", "recvfrom", "recvmsg", "recvmmsg", "shutdown", "setsockopt",
    "getsockopt", "getsockname", "getpeername", "getaddrinfo", "freeaddrinfo", "getnameinfo",
    "gethostbyname", "gethostbyname_r", "gethostbyaddr", "inet_pton", "inet_ntop", "poll",
    "ppoll", "select", "pselect", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait",
    "epoll_pwait", "eventfd",
}
CLOCK = {
    "time", "clock", "clock_gettime", "clock_getres", "gettimeofday", "timespec_get", "ftime",
    "times", "nanosleep", "clock_nanosleep", "sleep", "usleep", "alarm", "setitimer",
    "timer_create", "timer_settime", "timerfd_create", "timerfd_settime", "localtime",
    "localtime_r", "mktime", "tzset",
}
FILES = {
    "open", "openat", "creat", "close", "read", "write", "pread", "pwrite", "readv", "writev",
    "lseek", "fopen", "fdopen", "freopen", "fclose", "fread", "fwrite", "fgets", "fgetc", "getc",
    "getchar", "ungetc", "getline", "getdelim", "fputs", "fputc", "putc", "putchar", "puts",
    "printf", "fprintf", "vprintf", "vfprintf", "dprintf", "vdprintf", "perror", "fflush",
    "fseek", "fseeko", "ftell", "ftello", "rewind", "fileno", "stat", "fstat", "lstat", "fstatat",
    "statx", "access", "faccessat", "opendir", "fdopendir", "readdir", "closedir", "scandir",
    "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "remove",
    "truncate", "ftruncate", "mmap", "munmap", "ioctl", "fcntl", "dup", "dup2", "dup3", "pipe",
    "pipe2", "chmod", "fchmod", "chown", "fchown", "realpath", "readlink", "symlink", "link",
    "tmpfile", "mkstemp", "mkdtemp", "fsync", "fdatasync", "sync", "syslog", "openlog",
    "stdin", "stdout", "stderr",
}
PROCESS = {
    "fork", "vfork", "execv", "execve", "execvp", "execl", "execlp", "system", "popen", "pclose",
    "kill", "raise", "signal", "sigaction", "waitpid", "wait", "exit", "_exit", "abort",
    "pthread_create", "pthread_join", "getpid", "getrandom",
}
PREFIXES = ("curl_", "SSL_", "SSL_CTX_", "BIO_", "ERR_", "lws_", "OPENSSL_init")

# Pure functions that share an object with an edge; the check lets them through by name.
SHARED_FILE = {
    "psi_prom_label_get": "psi/prom.c: reads a label of a parsed series, beside the client",
    "psi_prom_match_node": "psi/prom.c: matches a parsed series to a node, beside the client",
}

# Objects of a pure archive that are its edge on purpose (archive file name, object).
EDGE_OBJECTS = {
    ("libpsi_base.a", "clock.c.o"): "base_mono_ms, the clock the edges read",
}


def base_name(sym):
    """The function a symbol stands for: _FORTIFY_SOURCE's and LFS's variants (__read_chk,
    __open_2, fopen64, __isoc99_sscanf) named as the function."""
    s = sym.split("@")[0]
    s = re.sub(r"^__isoc\d+_", "", s)
    s = s.lstrip("_")
    s = re.sub(r"(_chk|_2)$", "", s)
    s = re.sub(r"64$", "", s)
    return s


def io_kind(sym):
    name = base_name(sym)
    for kind, names in (("network", NETWORK), ("clock", CLOCK), ("file", FILES), ("process", PROCESS)):
        if name in names:
            return kind
    if sym.startswith(PREFIXES):
        return "network"
    return None


def symbols(nm, archive, flags):
    """{object: set of symbols} from `nm -A <flags> archive`: undefined ones with -u, global
    definitions with --defined-only."""
    out = subprocess.run([nm, "-A"] + flags + [archive], check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        tok = line.split()
        if len(tok) < 3 or tok[0].count(":") < 2:
            continue
        obj = tok[0].split(":")[-2]
        if flags == ["-u"] or tok[-2] in ("T", "D", "B", "R", "W", "V", "C", "G", "S"):
            res.setdefault(obj, set()).add(tok[-1])
    return res


def file_name(path):
    return path.rsplit("/", 1)[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--pure", action="append", required=True, help="an archive that must be pure")
    ap.add_argument("--deps", action="append", default=[], help="an archive the pure ones call into")
    a = ap.parse_args()

    # The functions defined by an object that does I/O, in the dependencies and the pure
    # archives themselves (their edge objects), with why: an object does I/O when it makes an
    # I/O call or calls a function of such an object (to a fixed point: psi_kubelet_fetch
    # calls the REST client, which calls libcurl).
    objs = []
    for archive in a.deps + a.pure:
        defined = symbols(a.nm, archive, ["--defined-only"])
        undef = symbols(a.nm, archive, ["-u"])
        for obj in set(defined) | set(undef):
            objs.append((obj, defined.get(obj, set()), undef.get(obj, set())))
    edge = {}
    changed = True
    while changed:
        changed = False
        for obj, defined, undef in objs:
            if any(s in edge for s in defined - set(SHARED_FILE)):
                continue
            calls = sorted(s for s in undef if io_kind(s) or (s in edge and s not in SHARED_FILE))
            if not calls:
                continue
            for s in defined:
                edge.setdefault(s, "defined in %s, which calls %s" % (obj, ", ".join(calls[:3])))
            changed = True

    problems = []
    for archive in a.pure:
        for obj, undef in sorted(symbols(a.nm, archive, ["-u"]).items()):
            if (file_name(archive), obj) in EDGE_OBJECTS:
                continue
            for s in sorted(undef):
                if io_kind(s):
                    problems.append("%s: %s: %s (a %s call)" % (file_name(archive), obj, s, io_kind(s)))
                elif s in edge and s not in SHARED_FILE:
                    problems.append("%s: %s: %s (%s)" % (file_name(archive), obj, s, edge[s]))
    for p in problems:
        print("impure: " + p)
    if problems:
        print("check_pure_symbols: %d reference(s) to I/O from a pure library" % len(problems))
        return 1
    print("check_pure_symbols: %d archive(s) pure" % len(a.pure))
    return 0


if __name__ == "__main__":
    sys.exit(main())
