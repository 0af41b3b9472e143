/* psi_specfile: reading a file whose path a PsiRebalance names (metrics.prometheus
 * bearerTokenFile and caFile) without trusting the path.
 *
 * Whoever may write a PsiRebalance picks these paths, and the operator reads them in its own
 * pod, so a path is treated as hostile: it could name a pipe (the server's wake-up pipe as
 * /proc/self/fd/N, a read that never returns), a device, a socket, a directory, a huge file,
 * or a secret of the operator's own. The rule:
 *   - the path is absolute, has no empty, "." or ".." component, and lies under one of the
 *     allowed roots (PSI_SPECFILE_ROOTS: where Kubernetes mounts Secrets, ConfigMaps and
 *     projected tokens into the operator's pod);
 *   - symbolic links are followed (a mounted Secret is a chain of them: token -> ..data/token
 *     -> ..2024_01_01_00_00_00.1/token), and the file they end at must pass the same rule
 *     (roots compared after their own links are resolved, so /var/run -> /run works);
 *   - that file is opened O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOFOLLOW|O_NOCTTY (opening a FIFO or
 *     a device never blocks), then fstat must say it is a regular file of at most max bytes.
 * A refusal says only that, the same for every reason (it does not exist, it is a FIFO, it is
 * outside the roots, it is too large): the PsiRebalance's author learns nothing of files they
 * cannot read. Who can write inside the roots is the pod's owner, trusted; a swap of a path
 * component between the check and the open by such a writer is not defended against.
 *
 * psi_specfile_path_allowed is pure; psi_specfile_open and psi_specfile_read touch the file
 * system. */
#ifndef PSI_PSI_SPECFILE_H
#define PSI_PSI_SPECFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* The allowed roots, each ending in '/', NULL-terminated, and the same in words. */
#define PSI_SPECFILE_ROOTS_TEXT "/var/run/secrets/, /run/secrets/ or /etc/psi-rebalancer/"
extern const char *const psi_specfile_roots[];

/* True when path is absolute, has no empty, "." or ".." component, and lies strictly under
 * one of roots (each ending in '/'). Pure. */
bool psi_specfile_path_allowed(const char *path, const char *const *roots);

/* The fixed refusal for field ("bearerTokenFile"): "<field> must be a regular file of at most
 * <max> bytes under <roots>", written into buf. Returns buf. */
const char *psi_specfile_refusal(const char *field, const char *const *roots, size_t max, char *buf, size_t len);

/* Open path by the rule above (roots NULL: psi_specfile_roots): a file descriptor (the
 * caller closes it) with *sb its fstat, or -1 when refused, for whatever reason. */
int psi_specfile_open(const char *path, const char *const *roots, size_t max, struct stat *sb);

/* Read all of fd, opened by psi_specfile_open with *sb, into a NUL-terminated buffer of *len
 * bytes (caller frees), or NULL when it grew past max meanwhile, or on a read error or no
 * memory. fd stays open. */
char *psi_specfile_read(int fd, size_t max, size_t *len);

#endif
