/* sass.c - the SASS compatibility rule (see sass.h). */
#include "driver/sass.h"
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <ctype.h>

static int entry_runs(const char *e, size_t n, int major, int minor)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, e, n);
    buf[n] = 0;
    if (strcmp(buf, "any") == 0) return 1;
    const char *p;
    if (strncmp(buf, "sm_", 3) == 0) p = buf + 3;
    else return 0;   /* PTX ("compute_XY") does not count: JIT output is not what was tuned */
    if (!isdigit((unsigned char)p[0]) || !isdigit((unsigned char)p[1])) return 0;
    int v = atoi(p);   /* 90 from "90a", 100 from "100a" */
    const char *q = p;
    while (isdigit((unsigned char)*q)) q++;
    int arch_specific = *q == 'a', family = *q == 'f';
    if (*q && !((arch_specific || family) && q[1] == 0)) return 0;
    int M = v / 10, m = v % 10;
    if (arch_specific) return major == M && minor == m;
    return major == M && minor >= m;
}

int tb_sass_runs_on(const char *sass, int major, int minor, char *why, size_t why_len)
{
    if (!sass || !*sass) {
        if (why && why_len) snprintf(why, why_len, "declares no SASS targets");
        return 0;
    }
    const char *s = sass;
    while (*s) {
        while (*s == ',' || *s == ' ') s++;
        const char *e = s;
        while (*e && *e != ',' && *e != ' ') e++;
        if (entry_runs(s, (size_t)(e - s), major, minor)) return 1;
        s = e;
    }
    if (why && why_len)
        snprintf(why, why_len, "no SASS for this GPU (sm_%d%d): built for %s", major, minor, sass);
    return 0;
}
