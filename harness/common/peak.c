/* peak.c - the dense tensor peak per SM per clock of each GPU generation, BF16 and FP8, and the
 * operand widths of a problem's dtypes (see peak.h). */
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

int tb_dtypes_fp8(const char *dtypes)
{
    return dtypes && strncmp(dtypes, "e4m3,e4m3,", 10) == 0;
}

double tb_peak_flop_per_clk_sm_dtypes(int major, int minor, const char *dtypes)
{
    double bf16 = tb_peak_flop_per_clk_sm(major, minor);
    if (!tb_dtypes_fp8(dtypes)) return bf16;
    /* FP8 tensor cores: Ada (8.9) and Hopper (9.0), at twice the BF16 rate */
    return (major == 9 && minor == 0) || (major == 8 && minor == 9) ? 2 * bf16 : 0;
}

int tb_dtypes_elem_bytes(const char *dtypes, int which)
{
    static const struct { const char *name; int bytes; } w[] = {
        { "bf16", 2 }, { "f16", 2 }, { "f32", 4 }, { "f64", 8 }, { "e4m3", 1 }, { "e5m2", 1 } };
    if (!dtypes || which < 0) return 0;
    const char *p = dtypes;
    for (int i = 0; i < which && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p) return 0;
    size_t n = strcspn(p, ",");
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (strlen(w[i].name) == n && strncmp(p, w[i].name, n) == 0) return w[i].bytes;
    return 0;
}
