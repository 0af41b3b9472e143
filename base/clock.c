/* clock: base_mono_ms (declared in util.h), the one clock read of base/, in a file of its
 * own so that the link check (tests/check_pure_symbols.py) tells it from the pure helpers. */
#include "base/util.h"

#include <time.h>

int64_t base_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
