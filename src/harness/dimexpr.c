/* harness/dimexpr.c - integer expressions over named dimensions, for the
 * input_dim_constraints, output_dims and attribute_constraints of a
 * PluginConfig (grammar: harness.h). */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "harness/harness.h"

#define DIMEXPR_MAX_DEPTH 64

typedef struct ev {
    const char *p, *start;
    const prt_dimexpr_sym *syms;
    int nb_syms;
    int depth;
    prt_status status;
    char *err;
    size_t cap;
} ev;

static int ev_fail(ev *e, prt_status s, const char *fmt, ...) PRT_PRINTF(3, 4);
static int ev_fail(ev *e, prt_status s, const char *fmt, ...)
{
    va_list ap;
    if (e->status != PRT_OK) return -1;
    e->status = s;
    if (e->err && e->cap) {
        int k = snprintf(e->err, e->cap, "\"%s\": ", e->start);
        if (k < 0 || (size_t)k >= e->cap) k = 0;
        va_start(ap, fmt);
        vsnprintf(e->err + k, e->cap - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void skip(ev *e)
{
    while (*e->p == ' ' || *e->p == '\t') e->p++;
}

static const char *here(const ev *e)
{
    return *e->p ? e->p : "the end";
}

static int lookup(ev *e, const char *name, size_t n, int64_t *out)
{
    int i;
    size_t cut;
    /* an exact name first (bare identifiers, and names that end in _K) */
    for (i = 0; i < e->nb_syms; i++)
        if (strlen(e->syms[i].name) == n && !memcmp(e->syms[i].name, name, n) && e->syms[i].nb > 0) {
            *out = e->syms[i].values[0];
            return 0;
        }
    /* name_K: split at the last underscore followed by digits only */
    cut = n;
    while (cut > 0 && isdigit((unsigned char)name[cut - 1])) cut--;
    if (cut > 1 && cut < n && name[cut - 1] == '_' && n - cut < 10) {
        int64_t k = 0;
        size_t j;
        for (j = cut; j < n; j++) k = k * 10 + (name[j] - '0');
        for (i = 0; i < e->nb_syms; i++)
            if (strlen(e->syms[i].name) == cut - 1 && !memcmp(e->syms[i].name, name, cut - 1)) {
                if (k >= e->syms[i].nb)
                    return ev_fail(e, PRT_STATUS_SHAPE_MISMATCH,
                                   "%.*s asks for index %" PRId64 " of \"%s\", which has %d value%s",
                                   (int)n, name, k, e->syms[i].name, e->syms[i].nb,
                                   e->syms[i].nb == 1 ? "" : "s");
                *out = e->syms[i].values[k];
                return 0;
            }
    }
    return ev_fail(e, PRT_STATUS_NOT_FOUND, "unknown name \"%.*s\"", (int)n, name);
}

static int expr(ev *e, int64_t *out);

static int primary(ev *e, int64_t *out)
{
    skip(e);
    if (isdigit((unsigned char)*e->p)) {
        int64_t v = 0;
        while (isdigit((unsigned char)*e->p)) {
            int d = *e->p++ - '0';
            if (v > (INT64_MAX - d) / 10) return ev_fail(e, PRT_STATUS_BAD_FORMAT, "number too large");
            v = v * 10 + d;
        }
        if (isalpha((unsigned char)*e->p) || *e->p == '_')
            return ev_fail(e, PRT_STATUS_BAD_FORMAT, "expected an operator after a number, found \"%s\"",
                           here(e));
        *out = v;
        return 0;
    }
    if (isalpha((unsigned char)*e->p) || *e->p == '_') {
        const char *s = e->p;
        while (isalnum((unsigned char)*e->p) || *e->p == '_') e->p++;
        return lookup(e, s, (size_t)(e->p - s), out);
    }
    if (*e->p == '(') {
        e->p++;
        if (expr(e, out) < 0) return -1;
        skip(e);
        if (*e->p != ')') return ev_fail(e, PRT_STATUS_BAD_FORMAT, "expected ')', found \"%s\"", here(e));
        e->p++;
        return 0;
    }
    return ev_fail(e, PRT_STATUS_BAD_FORMAT, "expected a number, a name or '(', found \"%s\"", here(e));
}

static int unary(ev *e, int64_t *out)
{
    skip(e);
    if (*e->p == '-') {
        int64_t v;
        e->p++;
        if (++e->depth > DIMEXPR_MAX_DEPTH) return ev_fail(e, PRT_STATUS_BAD_FORMAT, "nested too deeply");
        if (unary(e, &v) < 0) return -1;
        e->depth--;
        if (v == INT64_MIN) return ev_fail(e, PRT_STATUS_BAD_FORMAT, "overflow");
        *out = -v;
        return 0;
    }
    return primary(e, out);
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int term(ev *e, int64_t *out)
{
    int64_t a, b;
    if (unary(e, &a) < 0) return -1;
    for (;;) {
        char op;
        skip(e);
        op = *e->p;
        if (op != '*' && op != '/' && op != '%') break;
        e->p++;
        if (unary(e, &b) < 0) return -1;
        if (op == '*') {
            if (__builtin_mul_overflow(a, b, &a)) return ev_fail(e, PRT_STATUS_BAD_FORMAT, "overflow");
        } else {
            if (b == 0) return ev_fail(e, PRT_STATUS_BAD_FORMAT, "division by zero");
            if (a == INT64_MIN && b == -1) return ev_fail(e, PRT_STATUS_BAD_FORMAT, "overflow");
            a = op == '/' ? floordiv(a, b) : a - floordiv(a, b) * b;
        }
    }
    *out = a;
    return 0;
}

static int expr(ev *e, int64_t *out)
{
    int64_t a, b;
    if (++e->depth > DIMEXPR_MAX_DEPTH) return ev_fail(e, PRT_STATUS_BAD_FORMAT, "nested too deeply");
    if (term(e, &a) < 0) return -1;
    for (;;) {
        char op;
        skip(e);
        op = *e->p;
        if (op != '+' && op != '-') break;
        e->p++;
        if (term(e, &b) < 0) return -1;
        if (op == '+' ? __builtin_add_overflow(a, b, &a) : __builtin_sub_overflow(a, b, &a))
            return ev_fail(e, PRT_STATUS_BAD_FORMAT, "overflow");
    }
    e->depth--;
    *out = a;
    return 0;
}

static void ev_init(ev *e, const char *text, const prt_dimexpr_sym *syms, int nb, char *err, size_t cap)
{
    memset(e, 0, sizeof *e);
    e->p = e->start = text;
    e->syms = syms;
    e->nb_syms = syms ? nb : 0;
    e->err = err;
    e->cap = cap;
    if (err && cap) err[0] = 0;
}

static int at_end(ev *e)
{
    skip(e);
    if (*e->p) return ev_fail(e, PRT_STATUS_BAD_FORMAT, "unexpected \"%s\"", e->p);
    return 0;
}

prt_status prt__dimexpr_eval(const char *text, const prt_dimexpr_sym *syms, int nb_syms, int64_t *out,
                             char *err, size_t err_cap)
{
    ev e;
    int64_t v;
    if (!text || !out) return PRT_STATUS_INVALID_ARGUMENT;
    ev_init(&e, text, syms, nb_syms, err, err_cap);
    if (expr(&e, &v) < 0 || at_end(&e) < 0) return e.status;
    *out = v;
    return PRT_OK;
}

prt_status prt__dimexpr_eval_list(const char *text, const prt_dimexpr_sym *syms, int nb_syms,
                                  prt_dims *out, char *err, size_t err_cap)
{
    ev e;
    prt_dims d;
    if (!text || !out) return PRT_STATUS_INVALID_ARGUMENT;
    ev_init(&e, text, syms, nb_syms, err, err_cap);
    memset(&d, 0, sizeof d);
    skip(&e);
    if (*e.p) {
        for (;;) {
            int64_t v;
            if (d.nb >= PRT_MAX_DIMS) {
                ev_fail(&e, PRT_STATUS_UNSUPPORTED, "more than %d dimensions", PRT_MAX_DIMS);
                return e.status;
            }
            if (expr(&e, &v) < 0) return e.status;
            d.d[d.nb++] = v;
            skip(&e);
            if (*e.p != ',') break;
            e.p++;
        }
    }
    if (at_end(&e) < 0) return e.status;
    *out = d;
    return PRT_OK;
}

prt_status prt__dimexpr_check(const char *text, const prt_dimexpr_sym *syms, int nb_syms, int *holds,
                              char *err, size_t err_cap)
{
    static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">", "MULTIPLE_OF"};
    ev e;
    int64_t a, b;
    int op = -1, k, r;
    if (!text || !holds) return PRT_STATUS_INVALID_ARGUMENT;
    ev_init(&e, text, syms, nb_syms, err, err_cap);
    if (expr(&e, &a) < 0) return e.status;
    skip(&e);
    for (k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++) {
        size_t n = strlen(ops[k]);
        if (!strncmp(e.p, ops[k], n) && (k < 6 || !isalnum((unsigned char)e.p[n]))) {
            op = k;
            e.p += n;
            break;
        }
    }
    if (op < 0) {
        ev_fail(&e, PRT_STATUS_BAD_FORMAT,
                "expected ==, !=, <=, >=, <, > or MULTIPLE_OF, found \"%s\"", here(&e));
        return e.status;
    }
    if (expr(&e, &b) < 0 || at_end(&e) < 0) return e.status;
    switch (op) {
    case 0: r = a == b; break;
    case 1: r = a != b; break;
    case 2: r = a <= b; break;
    case 3: r = a >= b; break;
    case 4: r = a < b; break;
    case 5: r = a > b; break;
    default: r = b != 0 && (b == -1 || a % b == 0); break;
    }
    *holds = r;
    return PRT_OK;
}
