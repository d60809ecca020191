/* nvml_sampler.h - NVML sampled *during* a measurement: a thread that reads one device's SM
 * clock, power, temperature and clock-event reasons every period, and its energy and
 * violation counters at the start and the end. No CUDA; NVML through nvml.h.
 *
 *     tb_nvml_sampler *s = NULL;
 *     tb_nvml_sampler_start(dev, 10, &s, msg, sizeof msg);   (s stays NULL on failure)
 *     ... the timed work ...
 *     tb_nvml_summary sum;
 *     tb_nvml_sampler_stop(s, &sum);                         (NULL s: an empty summary)
 *
 * What it costs the measured thread: start waits for the thread to take its first readings
 * (energy, two violation counters), stop waits for the sample in flight, if any, and the
 * final readings. In between the measured thread does nothing: no lock is ever held across an
 * NVML call, and the sampler thread blocks every signal, so SIGINT and friends still reach
 * (and interrupt) the measuring thread. The sampler's own NVML calls share the driver with
 * the measurement, as any sampling does.
 *
 * Periodic samples fall at start + k * period (k >= 1), not at the edges, where the GPU may
 * still be idle; if the window ends before the first one, one sample is taken at stop so
 * that n >= 1. Samples whose deadline has passed (NVML slower than the period) are skipped,
 * not taken in a burst.
 */
#ifndef TB_NVML_SAMPLER_H
#define TB_NVML_SAMPLER_H
#include "common/nvml.h"
#include <stddef.h>

typedef struct tb_nvml_sampler tb_nvml_sampler;

/* Unknown values are NaN (doubles) or -1 (temp_c_max); counts are 0. */
typedef struct tb_nvml_summary {
    int n;                                   /* samples taken */
    double sm_mhz_min, sm_mhz_mean, sm_mhz_max;
    double power_w_mean, power_w_max;        /* NVML's power reading (see tb_nvml_power_mw) */
    int temp_c_max;
    unsigned long long reasons_or;           /* OR of every sample's reasons */
    int n_throttled;                         /* samples with a TB_NVML_THROTTLE_MASK reason */
    int n_power_capped;                      /* samples with SW_POWER_CAP */
    double energy_j;                         /* total-energy delta start->stop, NaN if unknown */
    double seconds;                          /* wall time start->stop (of those readings) */
    double violation_power_ms, violation_thermal_ms;   /* deltas, NaN if unknown */
} tb_nvml_summary;

/* Start sampling dev every period_ms (0 means the default, 10; at most 60000). NVML must be
 * open (tb_nvml_open) and stay open until tb_nvml_sampler_stop.
 * Returns TB_OK and *out; else *out = NULL and TB_ENOGPU (NVML not loaded), TB_ECUDA (dev
 * does not answer), TB_EUSAGE (no dev, bad period), TB_ENOMEM or TB_EINTERNAL (no thread),
 * with msg. */
int tb_nvml_sampler_start(tb_nvml_dev *dev, int period_ms, tb_nvml_sampler **out, char *msg,
                          size_t len);

/* Stop, join, fill *out (if not NULL) and free s; s is invalid afterwards. s == NULL fills an
 * empty summary (n 0, the rest unknown), so a failed start needs no special case. */
void tb_nvml_sampler_stop(tb_nvml_sampler *s, tb_nvml_summary *out);
#endif
