/* api_names: the Kubernetes name syntaxes the API uses (qualified names for label and taint
 * keys, label values, DNS-1123 labels). Each check returns NULL when s is valid, or a static
 * sentence saying what is wrong. */
#ifndef PSI_API_NAMES_H
#define PSI_API_NAMES_H

/* A qualified name: [prefix/]name, prefix a DNS-1123 subdomain of at most 253 characters,
 * name 1..63 alphanumerics, '-', '_' or '.', beginning and ending with an alphanumeric. */
const char *api_names_check_qualified(const char *s);

/* A label value: empty, or 1..63 characters of the same alphabet as a qualified name's name. */
const char *api_names_check_label_value(const char *s);

/* A DNS-1123 label: 1..63 lowercase alphanumerics or '-', beginning and ending with an alphanumeric. */
const char *api_names_check_dns_label(const char *s);

/* A DNS-1123 subdomain: 1..253 characters, dot-separated DNS-1123 labels. */
const char *api_names_check_dns_subdomain(const char *s);

#endif
