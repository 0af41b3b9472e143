/* coverage: how much of a sample that did not fail measured what the PsiRebalance acts on,
 * and the MetricsAvailable and Ready story that follows from it. A node is measured when the
 * sample has a reading of spec.pressure.resource for it; an unmeasured node is named with why
 * (the reason its source gave, or NoSeries when the source simply had no series for it, as a
 * Prometheus without that node's node_exporter does). Pure.
 *
 *   every node asked measured (or none asked)  SampleSucceeded   MetricsAvailable True
 *   some measured, some not                    PartiallyMeasured MetricsAvailable False,
 *                                              Degraded True, Ready True (the measured nodes
 *                                              are acted on; the others' taints are held)
 *   none measured                              NoNodeMeasured    MetricsAvailable False,
 *                                              Ready False, every taint held */
#ifndef PSI_RECONCILE_COVERAGE_H
#define PSI_RECONCILE_COVERAGE_H

#include <stddef.h>

#include "psi/source.h"

#define COVERAGE_REASON_ALL "SampleSucceeded"
#define COVERAGE_REASON_PARTIAL "PartiallyMeasured"
#define COVERAGE_REASON_NONE "NoNodeMeasured"
#define COVERAGE_WHY_NO_SERIES "NoSeries" /* the source answered but had nothing for the node */

/* The count of one sample. */
struct coverage {
    size_t asked;    /* nodes in the sample */
    size_t measured; /* of them, with a reading of the resource acted on */
};

/* Count the nodes of s with a reading of res, and write into text (len bytes) the nodes
 * without one: "worker-2 (PSIUnavailable), worker-3 (NoSeries)", as many as fit, then
 * ", ..."; "" when every node is measured. Returns the count. */
struct coverage coverage_of(const struct psi_sample *s, enum psi_resource res, char *text, size_t len);

/* The MetricsAvailable reason of c: COVERAGE_REASON_ALL, _PARTIAL or _NONE (table above). */
const char *coverage_reason(const struct coverage *c);

#endif
