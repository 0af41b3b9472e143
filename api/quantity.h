/* api_quantity: Kubernetes resource quantities ("250m", "4Gi", "1e3") as doubles, for the
 * operator (fit checks, node capacities) and the simulator (scenario files). Pure. */
#ifndef PSI_API_QUANTITY_H
#define PSI_API_QUANTITY_H

#include <stddef.h>

/* Parse s into *out (cpu in cores, memory in bytes, counts as is): a decimal number, "+"
 * allowed, with an optional binary suffix (Ki Mi Gi Ti Pi Ei), decimal suffix
 * (n u m k M G T P E) or exponent (e3, E-2; "1E" is the exa suffix). Negative numbers
 * (every quantity read is a capacity, request or size) and numbers beyond a double
 * (1e999) are refused. Returns 0, or -1 with *out untouched and, when err is not NULL,
 * why in err (errlen bytes) naming s. */
int api_quantity_parse(const char *s, double *out, char *err, size_t errlen);

#endif
