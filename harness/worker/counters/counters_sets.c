/* counters_sets.c - the named metric sets of `--metrics` (banks, memory, compute, all) and the
 * unit of a metric read off its name (see counters.h). No CUPTI call here. */
#include "worker/counters/counters.h"
#include <stdio.h>
#include <string.h>

/* The sets. Names checked against GH100's metric list on the H100 (docs/counters.md); an
 * entry the chip lacks is reported unavailable, not an error. GH100 has no hardware counter
 * for ldmatrix conflicts alone (only sm__sass_..._op_ldsm, which needs SASS patching) and no
 * sm__pipe_tensor_op_gmma_cycles_active: its fp16/bf16/fp8 tensor pipe, mma.sync and wgmma
 * alike, is sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active. */
#define M_LD "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
#define M_ST "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
#define M_GMMA "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"
#define M_LDGSTS "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"
#define M_WAVES "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
#define M_INST "smsp__inst_executed.sum"
#define M_DRAM_RD "dram__bytes_read.sum"
#define M_DRAM_WR "dram__bytes_write.sum"
#define M_L2HIT "lts__t_sector_hit_rate.pct"
/* the same bytes PM-sampled over the kernel's own window (ncu's): without what the L2 writes
 * back after the kernel, which the range profiler's figures hold */
#define M_PM_RD "pm:dram__bytes_read.sum"
#define M_PM_WR "pm:dram__bytes_write.sum"
#define M_TENSOR_PIPE "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active" \
    "|sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
#define M_GMMA_INST "sm__inst_executed_pipe_tensor_op_gmma.sum"
#define M_HMMA_INST "sm__inst_executed_pipe_tensor_op_hmma.sum"
#define M_SM_TP "sm__throughput.avg.pct_of_peak_sustained_elapsed"
#define M_TIME "gpu__time_duration.sum"

static const char *const set_banks[] = { M_LD, M_ST, M_GMMA, M_LDGSTS, M_WAVES, M_INST, NULL };
static const char *const set_memory[] = { M_DRAM_RD, M_DRAM_WR, M_L2HIT, M_PM_RD, M_PM_WR, NULL };
static const char *const set_compute[] = { M_TENSOR_PIPE, M_GMMA_INST, M_HMMA_INST, M_SM_TP, M_TIME, NULL };
static const char *const set_all[] = { M_LD, M_ST, M_GMMA, M_LDGSTS, M_WAVES, M_INST, M_DRAM_RD,
    M_DRAM_WR, M_L2HIT, M_PM_RD, M_PM_WR, M_TENSOR_PIPE, M_GMMA_INST, M_HMMA_INST, M_SM_TP, M_TIME, NULL };

const char *const *tb_counters_set(const char *name)
{
    if (!name) return NULL;
    if (strcmp(name, "banks") == 0) return set_banks;
    if (strcmp(name, "memory") == 0) return set_memory;
    if (strcmp(name, "compute") == 0) return set_compute;
    if (strcmp(name, "all") == 0) return set_all;
    return NULL;
}

const char *tb_counters_unit(const char *metric)
{
    char first[256];
    if (!metric) return "";
    snprintf(first, sizeof first, "%s", metric);
    char *bar = strchr(first, '|');
    if (bar) *bar = 0;
    int per_s = strstr(first, ".per_second") != NULL;
    if (strstr(first, "pct")) return "%";
    if (strstr(first, "bytes")) return per_s ? "bytes/s" : "bytes";
    if (strstr(first, "bank_conflicts") || strstr(first, "wavefronts")) return "wavefronts";
    if (strstr(first, "sectors")) return per_s ? "sectors/s" : "sectors";
    if (strstr(first, "requests")) return "requests";
    if (strstr(first, "inst_executed") || strstr(first, "inst_issued")) return "inst";
    if (strstr(first, "time_duration")) return "ns";
    if (strstr(first, "cycles")) return "cycles";
    return "";
}
