/* peak.c - the dense BF16 tensor peak per SM per clock of each GPU generation (see peak.h). */
#include "common/peak.h"

double tb_peak_flop_per_clk_sm(int major, int minor)
{
    if (major == 9 && minor == 0) return 4096;     /* H100/H200: 989 TFLOP/s @ 1830 MHz, 132 SMs */
    if (major == 8 && minor == 0) return 2048;     /* A100: 312 TFLOP/s @ 1410 MHz, 108 SMs */
    if (major == 8 && (minor == 9 || minor == 7)) return 1024;
    if (major == 8 && minor == 6) return 512;
    return 0;
}
