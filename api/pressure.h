/* pressure: the kernel's pressure stall vocabulary, as the PsiRebalance API and every reader
 * of /proc/pressure, the kubelet's Summary and node_exporter name it: the resources cpu,
 * memory and io, and the two kinds of each, "some" (at least one task stalled) and "full"
 * (all non-idle tasks stalled). Shared by the operator's sources (controller/psi) and the
 * simulator, which reports what they read. */
#ifndef PSI_API_PRESSURE_H
#define PSI_API_PRESSURE_H

/* Resources, as array indexes. */
enum psi_resource { PSI_CPU = 0, PSI_MEMORY = 1, PSI_IO = 2, PSI_NRESOURCES = 3 };

/* Bits of a set of resources. */
#define PSI_RES_BIT(r) (1u << (r))
#define PSI_RES_ALL (PSI_RES_BIT(PSI_CPU) | PSI_RES_BIT(PSI_MEMORY) | PSI_RES_BIT(PSI_IO))

enum psi_kind { PSI_SOME = 0, PSI_FULL = 1 };

/* Resource name "cpu", "memory", "io". */
const char *psi_resource_name(enum psi_resource r);

/* Resource from its name; returns 0 or -1 when unknown. */
int psi_resource_parse(const char *s, enum psi_resource *out);

#endif
