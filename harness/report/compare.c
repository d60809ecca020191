/* compare.c - the rows of a comparison (see compare.h): pairing, the control, the verdicts. */
#include "report/compare.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_compare_opts_default(tb_compare_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threshold = 0.02;
    o->conf = 0.95;
    o->iters = 2000;
    o->paired_control = 1;
}

void tb_comparison_free(tb_comparison *c)
{
    if (!c) return;
    free(c->r);
    memset(c, 0, sizeof *c);
}

static tb_side_state state_of(const tb_side_entry *e)
{
    if (!e) return TB_SIDE_ABSENT;
    tb_side_state s = tb_verdict_state(e->status, e->disposition);
    return s == TB_SIDE_VALID && e->n_ms == 0 ? TB_SIDE_INVALID : s;   /* no samples: not timed */
}

static void describe(const tb_side_entry *e, const char *side, char *buf, size_t len)
{
    size_t l = strlen(buf);
    if (!e || state_of(e) == TB_SIDE_VALID || l + 1 >= len) return;
    snprintf(buf + l, len - l, "%s%s %s/%s", l ? "; " : "", side, tb_status_name(e->status),
             tb_disposition_name(e->disposition));
    l = strlen(buf);
    if (e->rule[0] && l + 1 < len) snprintf(buf + l, len - l, " (%s)", e->rule);
    l = strlen(buf);
    if (e->reason[0] && l + 1 < len) snprintf(buf + l, len - l, ": %.160s", e->reason);
}

static int add_row(tb_comparison *c, const char *variant, const char *shape,
                   const tb_side_entry *b, const tb_side_entry *h, const tb_side *base,
                   const tb_side *head, char *msg, size_t len)
{
    tb_compare_row *nr = realloc(c->r, (c->n + 1) * sizeof *nr);
    if (!nr) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    c->r = nr;
    tb_compare_row *r = &c->r[c->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    snprintf(r->shape, sizeof r->shape, "%s", shape);
    r->base_state = state_of(b);
    r->head_state = state_of(h);
    r->ratio = r->lo = r->hi = r->drift = NAN;
    r->base_ms = b && r->base_state == TB_SIDE_VALID ? b->median_ms : NAN;
    r->head_ms = h && r->head_state == TB_SIDE_VALID ? h->median_ms : NAN;
    r->base_n = b ? b->n_total : 0;
    r->head_n = h ? h->n_total : 0;
    describe(b, "base", r->note, sizeof r->note);
    describe(h, "head", r->note, sizeof r->note);
    r->base_clock = b && b->clock_mhz > 0 ? b->clock_mhz : NAN;
    r->head_clock = h && h->clock_mhz > 0 ? h->clock_mhz : NAN;

    const int is_control = c->o.control[0] && !strcmp(variant, c->o.control);
    const tb_side_entry *bc = NULL, *hc = NULL;
    if (c->o.control[0]) {
        bc = tb_side_find(base, c->o.control, shape);
        hc = tb_side_find(head, c->o.control, shape);
        if (state_of(bc) == TB_SIDE_VALID && state_of(hc) == TB_SIDE_VALID)
            r->drift = hc->median_ms / bc->median_ms;
        else bc = hc = NULL;
    }
    int both = r->base_state == TB_SIDE_VALID && r->head_state == TB_SIDE_VALID;
    if (both) {
        int rc;
        if (c->o.control[0] && !is_control && !bc) {
            r->change = TB_CHANGE_NOT_TIMED;
            snprintf(r->note, sizeof r->note, "no valid control '%s' on this shape on both sides: "
                     "not compared across runs", c->o.control);
            goto counted;
        }
        /* paired by round where the samples were interleaved: base and head in one run (a
         * same-run gate), or each side with its control in its own run */
        const int ctl = !is_control && bc;
        const int paired = ctl ? c->o.paired_control : c->o.paired;
        rc = (paired ? tb_verdict_ratio_paired : tb_verdict_ratio)(
                 b->ms, b->n_ms, h->ms, h->n_ms, ctl ? bc->ms : NULL, ctl ? bc->n_ms : 0,
                 ctl ? hc->ms : NULL, ctl ? hc->n_ms : 0, c->o.conf, c->o.iters,
                 tb_verdict_seed(variant, shape), &r->ratio, &r->lo, &r->hi, msg, len);
        if (rc) return rc;
    }
    r->change = tb_verdict_classify(r->base_state, r->head_state, r->lo, r->hi, c->o.threshold);
    if (is_control && both) {
        r->change = TB_CHANGE_CONTROL;
        snprintf(r->note, sizeof r->note, "its ratio is the GPU's drift between the runs, "
                 "divided out of every other row of this shape");
    }
    /* a slower row whose two copies' setups chose differently says so: a tuner that times its
     * candidates can choose by the order it ran in (docs/perf.md, seventh session) */
    if (r->change == TB_CHANGE_SLOWER && b->describe[0] && h->describe[0] &&
        strcmp(b->describe, h->describe)) {
        size_t l = strlen(r->note);
        snprintf(r->note + l, sizeof r->note - l, "%ssetup chose differently: base '%.110s', head '%.110s'",
                 l ? "; " : "", b->describe, h->describe);
    }
    /* the two sides ran at clocks more than 1 % apart: say so where it matters, with the
     * figures (issue 28: a difference between separate runs that is the card's, not the
     * kernel's, must be told apart) */
    const double moved = isfinite(r->base_clock) && isfinite(r->head_clock)
                       ? r->head_clock / r->base_clock - 1 : 0;
    if (fabs(moved) > TB_CLOCK_MOVED) {
        c->clock_moved++;
        if (fabs(moved) > fabs(c->clock_worst)) c->clock_worst = moved;
        if (r->change != TB_CHANGE_UNCHANGED && r->change != TB_CHANGE_CONTROL) {
            size_t l = strlen(r->note);
            snprintf(r->note + l, sizeof r->note - l, "%sSM clock base %.0f MHz, head %.0f MHz (%+.1f %%): "
                     "a difference this size can be the card's pace, not the kernel's", l ? "; " : "",
                     r->base_clock, r->head_clock, moved * 100);
        }
    }
counted:
    c->count[r->change]++;
    if (tb_change_fails(r->change)) c->failures++;
    return TB_OK;
}

int tb_compare(const tb_side *base, const tb_side *head, const tb_compare_opts *o,
               tb_comparison *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    out->o = *o;
    if (!(o->threshold >= 0 && o->threshold < 1))
        return tb_fail(msg, len, TB_EUSAGE, "threshold %g is not a fraction in [0, 1)", o->threshold);
    snprintf(out->base_what, sizeof out->base_what, "%s", base->what);
    snprintf(out->head_what, sizeof out->head_what, "%s", head->what);
    int rc = TB_OK;
    for (size_t i = 0; rc == TB_OK && i < base->n; i++) {
        const tb_side_entry *b = &base->e[i];
        rc = add_row(out, b->variant, b->shape, b, tb_side_find(head, b->variant, b->shape),
                     base, head, msg, len);
    }
    for (size_t i = 0; rc == TB_OK && i < head->n; i++) {
        const tb_side_entry *h = &head->e[i];
        if (!tb_side_find(base, h->variant, h->shape))
            rc = add_row(out, h->variant, h->shape, NULL, h, base, head, msg, len);
    }
    if (rc) tb_comparison_free(out);
    return rc;
}
