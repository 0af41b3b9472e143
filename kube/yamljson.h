/* kube_yamljson: parse YAML text (the first document) into a cJSON tree with libyaml. */
#ifndef PSI_KUBE_YAMLJSON_H
#define PSI_KUBE_YAMLJSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Parse the first YAML document of text[0..len) into cJSON (caller frees with cJSON_Delete).
 * Quoted scalars are strings; plain scalars are typed as in YAML 1.2's core schema
 * (null/~/empty, true/false, integers, floats, else strings); explicit !!str tags are
 * strings. Aliases are expanded; a later duplicate key replaces an earlier one. An empty
 * stream gives a cJSON null. On error returns NULL and writes "line L column C: problem"
 * to errbuf. */
cJSON *kube_yamljson_parse(const char *text, size_t len, char *errbuf, size_t errlen);

#endif
