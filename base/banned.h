/* banned: C library functions this project does not call, as compile errors (after git's
 * banned.h). The build force-includes this header into every file of controller/, api/,
 * base/ and hack/sim (CMake's `-include`, see the top CMakeLists.txt), so a call to one of
 * them fails to compile with an error naming "sorry_<name>_is_banned".
 *
 * Why: strcpy, strcat, sprintf, vsprintf write without a bound; strncpy and strncat bound
 * in a way that leaves strings unterminated or truncates silently; strtok and strtok_r keep
 * hidden state or write into their input; atoi cannot report a bad number; gmtime, localtime,
 * ctime and asctime return static buffers (not thread-safe). Use instead: snprintf (and
 * base/strbuf.h to build text), memcpy with a known length, strtol/strtoul with their end
 * pointer and errno checked, gmtime_r.
 *
 * The system headers that declare them are included first, so their declarations are read
 * before the names are taken away. */
#ifndef PSI_BASE_BANNED_H
#define PSI_BASE_BANNED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BANNED(func) sorry_##func##_is_banned

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef strtok_r
#define strtok_r(x, y, z) BANNED(strtok_r)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef gmtime
#define gmtime(t) BANNED(gmtime)
#undef localtime
#define localtime(t) BANNED(localtime)
#undef ctime
#define ctime(t) BANNED(ctime)
#undef asctime
#define asctime(t) BANNED(asctime)

#endif
