/* peak.c - the dense BF16 tensor peak per SM per clock of each GPU generation (see peak.h). */
#include "common/peak.h"
#include <string.h>

double tb_peak_flop_per_clk_sm(int major, int minor)
{
    if (major == 9 && minor == 0) return 4096;     /* H100/H200: 989 TFLOP/s @ 1830 MHz, 132 SMs */
    if (major == 8 && minor == 0) return 2048;     /* A100: 312 TFLOP/s @ 1410 MHz, 108 SMs */
    if (major == 8 && (minor == 9 || minor == 7)) return 1024;
    if (major == 8 && minor == 6) return 512;
    return 0;
}

double tb_peak_flop_per_clk_sm_dtypes(int major, int minor, const char *dtypes)
{
    double bf16 = tb_peak_flop_per_clk_sm(major, minor);
    if (!dtypes || strncmp(dtypes, "e4m3,e4m3,", 10) != 0) return bf16;
    /* FP8 tensor cores: Ada (8.9) and Hopper (9.0), at twice the BF16 rate */
    return (major == 9 && minor == 0) || (major == 8 && minor == 9) ? 2 * bf16 : 0;
}
