/* psi_procfs: parser of the kernel's pressure files (/proc/pressure/{cpu,memory,io} and a
 * cgroup's *.pressure), whose format is
 *     some avg10=0.12 avg60=0.05 avg300=0.01 total=123456
 *     full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 * avgN are percents (0..100) averaged over N seconds, total is stall time in microseconds.
 * The cpu file of older kernels has only the "some" line. Keys may come in any order and
 * unknown keys are skipped (a later kernel may add some); avg10, avg60, avg300 and total
 * must each be there once. Pure functions except psi_procfs_read. */
#ifndef PSI_PSI_PROCFS_H
#define PSI_PSI_PROCFS_H

#include <stddef.h>
#include <stdint.h>

/* One line. */
struct psi_procfs_line {
    double avg10, avg60, avg300; /* percent */
    uint64_t total_us;           /* microseconds */
};

/* One file: the lines present. */
struct psi_procfs {
    int has_some, has_full;
    struct psi_procfs_line some, full;
};

/* Parse text (NUL-terminated). Returns 0, or -1 with a message naming the line and what is
 * wrong in errbuf (may be NULL): an unknown line kind, a repeated line, a missing or
 * repeated key, a value that is no number, an average outside 0..100, no "some" line. */
int psi_procfs_parse(const char *text, struct psi_procfs *out, char *errbuf, size_t errlen);

/* Read and parse the file at path. Returns 0 or -1 with a message (naming path) in errbuf. */
int psi_procfs_read(const char *path, struct psi_procfs *out, char *errbuf, size_t errlen);

#endif
