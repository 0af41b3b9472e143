/* taintkeys: status.taintKeys kept crash-safe. Every taint key this PsiRebalance may have
 * written is in its stored status before the first taint under it is added, so that a crash
 * between the taint write and the status write leaves at worst a recorded key that no node
 * carries (cleanup finds nothing under it and forgets it), never a taint that no record
 * names. Pure. */
#ifndef PSI_RECONCILE_TAINTKEYS_H
#define PSI_RECONCILE_TAINTKEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "api/status.h"

/* Whether the record of key must be stored before this cycle's taint writes: adds (the
 * taints to add under key this cycle) is not 0, and neither the stored status (stored, as the
 * cache shows it) nor stored_by_us (the key whose record this process stored last; NULL:
 * none, and it covers a cache that has not caught up with that write) names key. */
bool taintkeys_record_first(const struct api_status *stored, const char *stored_by_us, const char *key, size_t adds);

/* Whether recorded key may be forgotten: it is not the current key, and taking its taints
 * off every node left none behind (failures 0; a key never written has none to take off). */
bool taintkeys_forget(const char *key, const char *current, int failures);

#endif
