/* peak.h - the dense tensor-core peak of a GPU generation, in FLOP per clock per SM, BF16 and
 * FP8: the one table that `show` (% of peak at the measured clock), `report` and the
 * leaderboard's plausibility check (no figure above the peak of its operand type at the clock
 * a submission reports) read; and the width of a problem's operand types, which the roofline's
 * compulsory DRAM traffic (report/roofline.c) reads. */
#ifndef TB_PEAK_H
#define TB_PEAK_H
/* Dense tensor-core FLOP per clock per SM for BF16 inputs with FP32 accumulation, by compute
 * capability; 0 when unknown. H100 (9.0): 4096, so 132 SMs at 1830 MHz give 989 TFLOP/s,
 * NVIDIA's datasheet figure. */
double tb_peak_flop_per_clk_sm(int cc_major, int cc_minor);
/* The same for a problem's operand types (its dtypes, "e4m3,e4m3,..." or "bf16,bf16,..."):
 * FP8 (E4M3 A and B) is twice BF16 where the tensor cores take FP8 (compute capability 8.9
 * and 9.0: H100 8192, 1979 TFLOP/s at 1830 MHz with 132 SMs, NVIDIA's dense FP8 figure), 0
 * where they do not; anything else as tb_peak_flop_per_clk_sm. */
double tb_peak_flop_per_clk_sm_dtypes(int cc_major, int cc_minor, const char *dtypes);
/* 1 when dtypes names E4M3 A and B ("e4m3,e4m3,...", the FP8 problems of `sweep --dtype
 * e4m3`), 0 otherwise (NULL included). */
int tb_dtypes_fp8(const char *dtypes);
/* The bytes one element of operand `which` of dtypes takes (0 A, 1 B, 2 C, 3 D, 4 the
 * accumulator; "e4m3,e4m3,bf16,bf16,f32": 1, 1, 2, 2, 4); 0 for a type it does not know or a
 * list too short. */
int tb_dtypes_elem_bytes(const char *dtypes, int which);
#endif
