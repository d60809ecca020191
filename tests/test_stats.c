/* test_stats.c - harness/common/stats.c: median, mean, stdev, rse on known data. */
#include "tb_test.h"
#include "common/stats.h"
#include <math.h>

int main(void)
{
    tb_stats st;
    TB_CASE("stats-1.1", "odd count median and spread") {
        double x[] = { 3, 1, 2, 5, 4 };
        TB_CHECK(tb_stats_summarise(x, 5, &st) == 0);
        TB_CHECK(st.median == 3 && st.mean == 3 && st.min == 1 && st.max == 5);
        TB_CHECK(fabs(st.stdev - sqrt(2.5)) < 1e-12);
        TB_CHECK(fabs(st.rse - sqrt(2.5) / sqrt(5.0) / 3.0) < 1e-12);
        TB_CHECK(x[0] == 3);   /* input untouched */
    }
    TB_CASE("stats-1.2", "even count median averages the middle two") {
        double x[] = { 4, 1, 3, 2 };
        TB_CHECK(tb_stats_summarise(x, 4, &st) == 0);
        TB_CHECK(st.median == 2.5);
    }
    TB_CASE("stats-1.3", "one sample: stdev 0, rse NaN; none: NaN") {
        double x[] = { 7 };
        tb_stats_summarise(x, 1, &st);
        TB_CHECK(st.median == 7 && st.stdev == 0 && isnan(st.rse));
        tb_stats_summarise(x, 0, &st);
        TB_CHECK(isnan(st.median) && isnan(st.mean));
    }
    return tb_test_done();
}
