/* energy.c - joules per launch (energy.h). NVML's total-energy counter on the H100 moves
 * every 100 ms (99.9 ms median, 97.5-102.5 ms, measured: scripts/energy-probe.py,
 * docs/perf.md ninth session), and a read of it takes about 4 ms. Two reads an arbitrary
 * time apart are off by up to one update period at each end, so the worker used to read it
 * across 1 s of launches (+-10 % claimed). Here the window runs from one update of the
 * counter to the TB_ENERGY_PERIODS-th update after it while the variant runs back to back:
 * there is no quantisation error left, only the time of each update, known to within the
 * reads that bracket it, and the card's own swing of power between periods (at the 700 W
 * cap, 8192^3: 573-769 W per 100 ms period; over 200 ms windows p5..p95 -4.2 %..+3.2 %).
 * Joules per launch = the window's mean power x the GPU time per launch of the whole burst
 * (events around it), the burst being back to back throughout the window. The stated
 * uncertainty (energy_unc, relative) is the half-range of the periods' powers plus the
 * bracketing of the two end updates over the window. Cost: the wait for the first update
 * (0-100 ms), TB_ENERGY_PERIODS periods, and the launches still queued at the end. */
#define _GNU_SOURCE
#include "worker/energy.h"
#include "common/tb.h"
#include "common/nvml.h"
#include "common/stats.h"
#include "worker/step.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TB_ENERGY_PERIODS 2        /* counter updates the window spans (TILEBENCH_ENERGY_PERIODS: 1-10) */
#define TB_ENERGY_MAX_PERIODS 10
#define TB_ENERGY_CHUNK_MS 4.0     /* GPU time of one batch of launches */
#define TB_ENERGY_AHEAD_MS 12.0    /* GPU time kept queued while the counter is read */
#define TB_ENERGY_SETTLE_S 0.010   /* the window opens at an update this long after the start */
#define TB_ENERGY_GIVE_UP_S 0.5    /* no window by then (+0.1 s a period): no figure */
#define TB_ENERGY_RING 64

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The window in counter periods: TB_ENERGY_PERIODS, or TILEBENCH_ENERGY_PERIODS (1 to 10) for
 * studies of the window's length (docs/perf.md compares 2 with 10). */
static int periods(void)
{
    const char *e = getenv("TILEBENCH_ENERGY_PERIODS");
    char *end = NULL;
    long v = e ? strtol(e, &end, 10) : 0;
    return e && end != e && !*end && v >= 1 && v <= TB_ENERGY_MAX_PERIODS ? (int)v : TB_ENERGY_PERIODS;
}

static void note(vstate *vs, const char *key, double v, const char *text)
{
    cJSON *x = cJSON_Parse(vs->m.extra_json[0] ? vs->m.extra_json : "{}");
    if (!x) return;
    if (text) cJSON_AddStringToObject(x, key, text);
    else cJSON_AddNumberToObject(x, key, v);
    char *t = cJSON_PrintUnformatted(x);
    if (t && strlen(t) < sizeof vs->m.extra_json)
        snprintf(vs->m.extra_json, sizeof vs->m.extra_json, "%s", t);
    cJSON_free(t);
    cJSON_Delete(x);
}

void tbw_measure_energy(worker *w, vstate *vs)
{
    vs->energy_j = vs->power_w = NAN;
    vs->energy_launches = 0;
    unsigned long long e_prev;
    if (!w->nvml || tb_nvml_energy_mj(w->nvml, &e_prev) != TB_OK) return;
    const double med = tb_stats_median(vs->ms, vs->n);
    if (!(med > 0)) return;
    int per = (int)ceil(TB_ENERGY_CHUNK_MS / med);
    if (per < 1) per = 1;
    if (per > 20000) per = 20000;
    int ahead = (int)ceil(TB_ENERGY_AHEAD_MS / (med * per));
    if (ahead < 2) ahead = 2;
    if (ahead > TB_ENERGY_RING - 1) ahead = TB_ENERGY_RING - 1;
    cudaEvent_t ring[TB_ENERGY_RING], first, last;
    int nev = 0;
    for (; nev < ahead; nev++)
        if (cudaEventCreateWithFlags(&ring[nev], cudaEventDisableTiming) != cudaSuccess) break;
    const int evs_ok = nev == ahead && cudaEventCreate(&first) == cudaSuccess;
    const int last_ok = evs_ok && cudaEventCreate(&last) == cudaSuccess;
    if (!last_ok) {
        if (evs_ok) cudaEventDestroy(first);
        for (int i = 0; i < nev; i++) cudaEventDestroy(ring[i]);
        cudaGetLastError();
        return;
    }

    tbw_nvtx_push(w, vs, "energy");
    const double t_start = mono_s();
    cudaEventRecord(first, w->s);
    long long launches = 0, queued = 0, retired = 0;
    int lrc = 0;
    /* the updates seen: te = the middle of the two reads that bracket it, half = half their span */
    const int np = periods();
    double te[TB_ENERGY_MAX_PERIODS + 1], half[TB_ENERGY_MAX_PERIODS + 1];
    unsigned long long ee[TB_ENERGY_MAX_PERIODS + 1];
    int nu = 0;
    double t_prev = mono_s();   /* the previous read's middle */
    const char *why = NULL;
    while (nu <= np) {
        while (queued - retired < ahead && !lrc) {   /* keep the GPU busy */
            for (int i = 0; i < per && !lrc; i++) lrc = tbw_do_launch(&vs->lc, w->s);
            launches += per;
            cudaEventRecord(ring[queued % ahead], w->s);
            queued++;
        }
        if (lrc) { why = "a launch failed during the energy burst"; break; }
        const double a = mono_s();
        unsigned long long e;
        if (tb_nvml_energy_mj(w->nvml, &e) != TB_OK) { why = "the energy counter could not be read"; break; }
        const double b = mono_s(), mid = 0.5 * (a + b);
        if (e != e_prev && (nu > 0 || t_prev - t_start >= TB_ENERGY_SETTLE_S)) {
            te[nu] = 0.5 * (t_prev + mid);
            half[nu] = 0.5 * (mid - t_prev);
            ee[nu++] = e;
        }
        e_prev = e;
        t_prev = mid;
        if (b - t_start > TB_ENERGY_GIVE_UP_S + 0.1 * np) { why = "no energy window: the counter did not move as expected"; break; }
        /* retire the batches done; block on the oldest only when the queue is full */
        while (retired < queued && cudaEventQuery(ring[retired % ahead]) == cudaSuccess) retired++;
        cudaGetLastError();
    }
    cudaEventRecord(last, w->s);
    const int sync_ok = cudaEventSynchronize(last) == cudaSuccess;
    float gpu_ms = 0.f;
    if (sync_ok) cudaEventElapsedTime(&gpu_ms, first, last);
    tbw_nvtx_pop();
    w->energy_s += mono_s() - t_start;
    cudaEventDestroy(first);
    cudaEventDestroy(last);
    for (int i = 0; i < nev; i++) cudaEventDestroy(ring[i]);
    cudaGetLastError();
    if (!why && !sync_ok) why = "the energy burst failed";
    if (why) { note(vs, "energy_note", 0, why); return; }

    const double window = te[np] - te[0];
    const double joules = (double)(ee[np] - ee[0]) * 1e-3;
    if (!(window > 0) || !(gpu_ms > 0) || launches < 1) {
        note(vs, "energy_note", 0, "no usable window");
        return;
    }
    double pmin = INFINITY, pmax = 0;
    for (int i = 0; i < np; i++) {
        const double p = (double)(ee[i + 1] - ee[i]) * 1e-3 / (te[i + 1] - te[i]);
        pmin = fmin(pmin, p);
        pmax = fmax(pmax, p);
    }
    vs->power_w = joules / window;
    vs->energy_j = vs->power_w * ((double)gpu_ms * 1e-3 / (double)launches);
    vs->energy_launches = (int)(launches > 2000000000LL ? 2000000000LL : launches);
    const double unc = (pmax - pmin) / (pmax + pmin) + (half[0] + half[np]) / window;
    note(vs, "energy_unc", unc, NULL);
    note(vs, "energy_window_s", window, NULL);
    note(vs, "energy_periods", np, NULL);
}
