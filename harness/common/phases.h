/* phases.h - where a sweep's wall time went: start-up, probing, each worker's start, and the
 * worker's own phases (validation, warm-up, timing, the checks after timing, the energy
 * burst), the counters pass and the store. The worker times its phases and reports them in its
 * last line ({"type":"done","phases":{...}}); the parent adds the rest, prints the sum at the
 * end of a sweep and stores it with the run (runs.phases_json), as nvbench prints each
 * measurement's GPU time beside its wall time. Plain C, no CUDA, no SQLite. */
#ifndef TB_PHASES_H
#define TB_PHASES_H
#include <stddef.h>

typedef enum tb_phase {
    TB_PH_STARTUP = 0,   /* the parent: arguments, shape files, opening the store */
    TB_PH_PROBE,         /* the parent: asking a worker for the GPU, loading every .so */
    TB_PH_WORKER_START,  /* each shape's worker, from spawn to ready (CUDA context, buffers) */
    TB_PH_VALIDATION,    /* worker: setup() and the trials before timing */
    TB_PH_WARMUP,        /* worker: the method chosen, graphs built, warm-up launches */
    TB_PH_TIMING,        /* worker: the interleaved samples and the winner's second pass */
    TB_PH_CHECKS,        /* worker: inputs, hidden work, the trial after timing */
    TB_PH_ENERGY,        /* worker: the energy burst */
    TB_PH_COUNTERS,      /* the CUPTI pass (--metrics) */
    TB_PH_STORE,         /* the parent: writing results */
    TB_PH_COUNT
} tb_phase;

typedef struct tb_phases {
    double s[TB_PH_COUNT];   /* seconds per phase */
    double total_s;          /* the whole command's wall time; 0 when not known */
} tb_phases;

/* "startup", "probe", "worker_start", ... (the JSON keys, without "_s") */
const char *tb_phase_key(tb_phase p);
/* "start-up", "probe", "worker start", ... (for people) */
const char *tb_phase_label(tb_phase p);

/* into += x, phase by phase (total_s too) */
void tb_phases_add(tb_phases *into, const tb_phases *x);

/* {"startup_s":0.41,...,"total_s":84.2} into buf. TB_OK, or TB_EUSAGE when buf is too small. */
int tb_phases_to_json(const tb_phases *p, char *buf, size_t len);
/* The phases of a JSON object text (keys as tb_phases_to_json writes them; missing keys 0;
 * a value that is not a finite number >= 0 is refused). TB_OK or TB_EUSAGE with msg. */
int tb_phases_from_json(const char *json, tb_phases *p, char *msg, size_t len);

/* One line for people: "84.2 s: timing 40.3 s (48 %), energy 18.0 s (21 %), ..., other 3.3 s"
 * with the phases in decreasing order of time, those under 0.05 s left out, and "other" the
 * part of total_s no phase accounts for (left out when total_s is 0). Returns buf. */
const char *tb_phases_format(const tb_phases *p, char *buf, size_t len);
#endif
