/* shard.h - a sweep's shapes split into N shards (sweep --shard I/N): a deterministic partition
 * by shape, so N independent jobs (a Slurm array, N CI runners) measure every shape exactly
 * once, each shape's variants together on one GPU (interleaving and ranking stay within a
 * shape). Pure arithmetic on the shape list; no GPU, no store. */
#ifndef TB_SHARD_H
#define TB_SHARD_H
#include <stddef.h>
#include "driver/shapes.h"

#define TB_SHARD_MAX 4096

/* Parse "I/N" (0 <= I < N <= TB_SHARD_MAX; decimal, nothing else). TB_OK, or TB_EUSAGE with
 * "invalid value 'x' for --shard (I/N: 0 <= I < N <= 4096)" in msg. */
int tb_shard_parse(const char *spec, int *index, int *count, char *msg, size_t len);

/* The estimated cost of measuring a shape, in arbitrary units: 1 for what every shape costs
 * whatever its size (set-up, warm-up, the stopping rule, the energy window) plus one per
 * 10^12 FLOP (the op seam's count, tb_shape_flops: 2 m n k batch for a GEMM; the FP64
 * reference of validation and long kernels grow with it). */
double tb_shard_cost(const tb_shape *s);

/* owner[s] for every shape of l: the shard (0 .. count - 1) that measures it. Longest
 * processing time first: shapes by decreasing cost (ties by position), each to the shard with
 * the least cost so far (ties: the lowest shard). Depends only on the list's shapes and order
 * and on count, so every job of an array computes the same partition. count >= 1. TB_OK, or
 * TB_ENOMEM (owner unset: a job must never fall back to another partition than the others'). */
int tb_shard_assign(const tb_shape_list *l, int count, int *owner);

#endif
