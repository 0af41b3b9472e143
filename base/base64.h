/* kube_base64: standard base64 decoding for kubeconfig -data fields. */
#ifndef PSI_KUBE_BASE64_H
#define PSI_KUBE_BASE64_H

#include <stddef.h>

/* Decode standard base64 text (CR, LF, space and tab are skipped; "=" padding optional).
 * Returns 0 and a malloc'd NUL-terminated buffer in *out (caller frees) with its length in
 * *out_len, or -1 when the text is not base64 (*bad_at: offset of the offending character). */
int kube_base64_decode(const char *text, unsigned char **out, size_t *out_len, size_t *bad_at);

#endif
