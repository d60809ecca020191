/* test_sass.c - harness/driver/sass.c: which SASS runs on which GPU. */
#include "tb_test.h"
#include "driver/sass.h"

int main(void)
{
    char why[256];
    TB_CASE("sass-1.1", "sm_90a runs only on 9.0") {
        TB_CHECK(tb_sass_runs_on("sm_90a", 9, 0, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on("sm_90a", 10, 0, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on("sm_90a", 8, 0, why, sizeof why));
        TB_CHECK_STR_CONTAINS(why, "no SASS for this GPU (sm_80)");
    }
    TB_CASE("sass-1.2", "sm_80 runs on 8.x, not on 9.0") {
        TB_CHECK(tb_sass_runs_on("sm_80", 8, 6, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on("sm_80", 9, 0, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on("sm_86", 8, 0, why, sizeof why));
    }
    TB_CASE("sass-1.3", "lists, any, family-specific; PTX does not count") {
        TB_CHECK(tb_sass_runs_on("sm_80,sm_90", 9, 0, why, sizeof why));
        TB_CHECK(tb_sass_runs_on("any", 7, 5, why, sizeof why));
        TB_CHECK(tb_sass_runs_on("sm_100f", 10, 3, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on("sm_100f", 12, 0, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on("compute_80", 9, 0, why, sizeof why));
        TB_CHECK(tb_sass_runs_on("sm_120", 12, 0, why, sizeof why));
    }
    TB_CASE("sass-1.4", "empty and malformed declare nothing runnable") {
        TB_CHECK(!tb_sass_runs_on("", 9, 0, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on(NULL, 9, 0, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on("sm_9x", 9, 0, why, sizeof why));
        TB_CHECK(!tb_sass_runs_on("sm_20", 9, 0, why, sizeof why));
    }
    return tb_test_done();
}
