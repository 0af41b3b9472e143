/* quantity_format: resource amounts written as Kubernetes quantities ("4Gi", "200m"), the way
 * kubectl users write them (api_quantity_parse reads them). Pure. */
#ifndef PSI_SIM_QUANTITY_FORMAT_H
#define PSI_SIM_QUANTITY_FORMAT_H

#include <stddef.h>

/* Format bytes the way `kubectl` users write them: an integer number of Gi, Mi or Ki
 * when exact, else plain bytes ("4Gi", "300Mi", "1500"). Returns buf. */
char *quantity_format_bytes(double bytes, char *buf, size_t len);

/* Format cores as a CPU quantity: whole cores as an integer ("2"), else millicores
 * rounded up ("200m"). Returns buf. */
char *quantity_format_cpu(double cores, char *buf, size_t len);

#endif
