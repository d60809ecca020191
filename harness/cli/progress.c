/* progress.c - what a long command shows while it works (progress.h): on a terminal, one bar
 * redrawn in place with the count, an estimate of the time left and the item at work, and a
 * line for each failure; off a terminal, one line per result unless --quiet. Warnings clear
 * the bar first. */
#define _GNU_SOURCE
#include "cli/progress.h"
#include "cli/cli.h"
#include "common/text.h"
#include "common/op.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <time.h>

void tb_progress_clear(tb_progress *r)
{
    if (r->tty && r->bar_shown) { fputs("\r\033[K", stderr); r->bar_shown = 0; }
}

void tb_progress_warning(void *ctx, const char *line)
{
    tb_progress *r = ctx;
    tb_progress_clear(r);
    tb_cli_warn("%s", line);
}

int tb_progress_can_draw(void)
{
    const char *term = getenv("TERM"), *nc = getenv("NO_COLOR");
    return isatty(2) && !(term && !strcmp(term, "dumb")) && !(nc && *nc);
}

double tb_progress_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void draw_bar(tb_progress *r, const char *what, size_t done, size_t total)
{
    double el = tb_progress_now_s() - r->t0;
    double frac = total ? (double)done / (double)total : 1.0;
    char eta[32] = "--:--";
    if (done > 0 && frac < 1.0) {
        int s = (int)(el / frac - el);
        snprintf(eta, sizeof eta, "%d:%02d", s / 60, s % 60);
    }
    int w = 24, fill = (int)(frac * w);
    char bar[32];
    for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : '.';
    bar[w] = 0;
    fprintf(stderr, "\r\033[K[%s] %zu/%zu  eta %s  %.60s", bar, done, total, eta, what);
    fflush(stderr);
    r->bar_shown = 1;
}

/* A shape as the lines below print it: a GEMM's MxNxK as always, another op's token. */
static const char *shape_str(const tb_shape *s, char *buf, size_t len)
{
    const tb_op_desc *d = tb_op_of_shape(s);
    if (!d || d == &tb_op_gemm || !d->shape_text || d->shape_text(s, buf, len) < 0)
        snprintf(buf, len, "%lldx%lldx%lld", (long long)s->m, (long long)s->n, (long long)s->k);
    return buf;
}

void tb_progress_status(void *ctx, const tb_variant_info *v, const tb_shape *s, size_t done, size_t total)
{
    tb_progress *r = ctx;
    if (!r->tty) return;
    static double last;
    double t = tb_progress_now_s();
    if (t - last < 0.1) return;   /* variants take turns many times a second */
    last = t;
    char what[256];
    char name[sizeof v->name * 4];
    char sh[96];
    snprintf(what, sizeof what, "%s %s", shape_str(s, sh, sizeof sh),
             tb_text_escape(v->name, name, sizeof name, 0));
    draw_bar(r, what, done, total);
}

void tb_progress_result(void *ctx, const tb_variant_info *v, const tb_shape *s,
                       const tb_measurement *m, size_t done, size_t total)
{
    tb_progress *r = ctx;
    if (r->tty) {
        if (m->status != TB_STATUS_OK && m->status != TB_STATUS_UNSUPPORTED) {
            tb_progress_clear(r);
            char reason[sizeof m->reason * 4];
            char sh[96];
            fprintf(stderr, "  %s %s: %s: %s\n", v->name, shape_str(s, sh, sizeof sh),
                    tb_status_name(m->status), tb_text_escape(m->reason, reason, sizeof reason, 0));
        }
        draw_bar(r, "", done, total);
        return;
    }
    if (r->quiet) return;
    char fig[64] = "";
    if (m->status == TB_STATUS_OK && m->disposition == TB_DISP_PASSED)
        snprintf(fig, sizeof fig, "%.1f TFLOP/s ", m->tflops);
    char reason[sizeof m->reason * 4];
    char sh[96];
    fprintf(stderr, "[%zu/%zu] %s %s: %s%s/%s%s%s\n", done, total, shape_str(s, sh, sizeof sh),
            v->name, fig, tb_status_name(m->status),
            tb_disposition_name(m->disposition), m->reason[0] ? ": " : "",
            tb_text_escape(m->reason, reason, sizeof reason, 0));
}
