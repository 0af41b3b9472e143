/* quantity: Kubernetes resource quantities ("4Gi", "200m", "1.5", "2e3", "512M") as
 * doubles. Pure. */
#ifndef PSI_SIM_QUANTITY_H
#define PSI_SIM_QUANTITY_H

#include <stddef.h>

/* Parse s: a decimal number (optional sign, fraction, exponent e/E) followed by an optional
 * suffix: binary Ki Mi Gi Ti Pi Ei, decimal n u m k M G T P E. Returns 0 and the value in
 * *out, or -1 with why in err (of errlen bytes, may be NULL). */
int quantity_parse(const char *s, double *out, char *err, size_t errlen);

/* Format bytes the way `kubectl` users write them: an integer number of Gi, Mi or Ki
 * when exact, else plain bytes ("4Gi", "300Mi", "1500"). Returns buf. */
char *quantity_format_bytes(double bytes, char *buf, size_t len);

/* Format cores as a CPU quantity: whole cores as an integer ("2"), else millicores
 * rounded up ("200m"). Returns buf. */
char *quantity_format_cpu(double cores, char *buf, size_t len);

#endif
