#include "httpd/http.h"

#include <string.h>
#include <strings.h>

size_t psi_http_head_end(const char *buf, size_t len, size_t from)
{
    size_t i = from > 3 ? from - 3 : 0;
    for (; i + 3 < len; i++)
        if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n')
            return i + 4;
    return 0;
}

int psi_http_overflow_status(const char *buf, size_t len)
{
    return memchr(buf, '\n', len) ? 431 : 414;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decode s in place; -1 on a bad escape or an encoded NUL. */
static int decode_path(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r != '%') {
            *w++ = *r;
            continue;
        }
        int hi = hexval((unsigned char)r[1]), lo = hi < 0 ? -1 : hexval((unsigned char)r[2]);
        if (lo < 0 || (hi == 0 && lo == 0))
            return -1;
        *w++ = (char)(hi * 16 + lo);
        r += 2;
    }
    *w = '\0';
    return 0;
}

static int is_tchar(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* "METHOD SP target SP HTTP/1.x" in line (NUL-terminated, no CRLF). */
static int parse_request_line(char *line, struct psi_http_head *h)
{
    char *sp1 = strchr(line, ' ');
    if (!sp1 || sp1 == line)
        return 400;
    *sp1 = '\0';
    for (const char *c = line; *c; c++)
        if (!is_tchar((unsigned char)*c))
            return 400;
    char *target = sp1 + 1;
    char *sp2 = strchr(target, ' ');
    if (!sp2 || target[0] != '/')
        return 400;
    *sp2 = '\0';
    const char *version = sp2 + 1;
    if (strncmp(version, "HTTP/1.", 7) != 0 || !(version[7] == '0' || version[7] == '1') || version[8])
        return strncmp(version, "HTTP/", 5) == 0 ? 505 : 400;
    for (const char *c = target; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
            return 400;
    h->method = line;
    h->minor = version[7] - '0';
    char *q = strchr(target, '?');
    h->query = "";
    if (q) {
        *q = '\0';
        h->query = q + 1;
    }
    if (decode_path(target) < 0)
        return 400;
    h->path = target;
    return 0;
}

/* Trim optional white space at both ends of s in place; returns the trimmed start. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* Whether the comma-separated list v holds token (case-insensitive). */
static int list_has(const char *v, const char *token)
{
    size_t tl = strlen(token);
    while (*v) {
        while (*v == ' ' || *v == '\t' || *v == ',')
            v++;
        size_t n = strcspn(v, ",");
        size_t m = n;
        while (m && (v[m - 1] == ' ' || v[m - 1] == '\t'))
            m--;
        if (m == tl && strncasecmp(v, token, tl) == 0)
            return 1;
        v += n;
    }
    return 0;
}

static int parse_length(const char *v, long long *out)
{
    if (!*v)
        return -1;
    long long n = 0;
    for (const char *c = v; *c; c++) {
        if (*c < '0' || *c > '9' || n > (1LL << 50))
            return -1;
        n = n * 10 + (*c - '0');
    }
    *out = n;
    return 0;
}

/* One header field "name: value" (line NUL-terminated). */
static int parse_field(char *line, struct psi_http_head *h, int *conn_close, int *conn_keep)
{
    if (line[0] == ' ' || line[0] == '\t')
        return 400; /* obsolete line folding */
    char *colon = strchr(line, ':');
    if (!colon || colon == line)
        return 400;
    *colon = '\0';
    for (const char *c = line; *c; c++)
        if (!is_tchar((unsigned char)*c))
            return 400; /* includes a space before the colon */
    char *v = trim(colon + 1);
    for (const char *c = v; *c; c++)
        if (((unsigned char)*c < ' ' && *c != '\t') || *c == 0x7f)
            return 400;
    if (strcasecmp(line, "Content-Length") == 0) {
        long long n;
        if (parse_length(v, &n) < 0 || (h->content_length >= 0 && h->content_length != n))
            return 400;
        h->content_length = n;
    } else if (strcasecmp(line, "Transfer-Encoding") == 0) {
        size_t vl = strlen(v);
        if (vl < 7 || strcasecmp(v + vl - 7, "chunked") != 0)
            return 501;
        h->chunked = 1;
    } else if (strcasecmp(line, "Connection") == 0) {
        *conn_close |= list_has(v, "close");
        *conn_keep |= list_has(v, "keep-alive");
    } else if (strcasecmp(line, "Expect") == 0) {
        h->expect_continue = strcasecmp(v, "100-continue") == 0;
    } else if (strcasecmp(line, "Authorization") == 0) {
        if (strncasecmp(v, "Bearer ", 7) == 0)
            h->bearer = trim(v + 7);
    }
    return 0;
}

int psi_http_parse_head(char *buf, size_t len, struct psi_http_head *h)
{
    memset(h, 0, sizeof(*h));
    h->content_length = -1;
    h->bearer = "";
    h->query = "";
    if (len < 4 || memchr(buf, '\0', len))
        return 400;
    buf[len - 2] = '\0'; /* the blank line's CRLF; every line now ends in CRLF or NUL */
    int conn_close = 0, conn_keep = 0, first = 1;
    char *line = buf;
    while (*line) {
        char *eol = strstr(line, "\r\n");
        if (eol)
            *eol = '\0';
        if (memchr(line, '\r', strlen(line)) || memchr(line, '\n', strlen(line)))
            return 400; /* a bare CR or LF */
        int rc = first ? parse_request_line(line, h) : parse_field(line, h, &conn_close, &conn_keep);
        if (rc)
            return rc;
        first = 0;
        if (!eol)
            break;
        line = eol + 2;
    }
    if (first)
        return 400;
    if (h->chunked && h->content_length >= 0)
        return 400;
    h->keep_alive = h->minor == 1 ? !conn_close : conn_keep && !conn_close;
    return 0;
}

const char *psi_http_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}
