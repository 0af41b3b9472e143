#!/bin/sh
# pure_symbols.sh NM LIB...: fails if a pure library references a network, clock or file
# function of the C library or of libcurl (nm -u: the symbols its objects leave undefined).
set -eu
nm=$1
shift
banned='^(socket|connect|bind|listen|accept4?|getaddrinfo|gethostbyname|send|sendto|recv|recvfrom|poll|select|epoll_.*|curl_.*|SSL_.*|open|open64|openat|creat|fopen|fopen64|fdopen|freopen|read|write|pread|pwrite|fread|fwrite|fgets|fputs|fprintf|printf|puts|stat|stat64|fstat|lstat|access|unlink|rename|mkdir|opendir|readdir|clock_gettime|time|gettimeofday|nanosleep|usleep|sleep|clock)$'
rc=0
for lib in "$@"; do
  bad=$("$nm" -u "$lib" | awk 'NF { print $NF }' | sed 's/@.*//' | sort -u | grep -E "$banned" || true)
  if [ -n "$bad" ]; then
    echo "$lib is meant to be pure but references: $(echo "$bad" | tr '\n' ' ')"
    rc=1
  fi
done
[ "$rc" -eq 0 ] && echo "pure: $*"
exit "$rc"
