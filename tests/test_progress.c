/* test_progress.c - harness/cli/progress.c, run by tests/progress_tty.sh under a pseudo-terminal
 * (script): prints whether a bar may be drawn here (draw=0|1), then reports one measuring step
 * and one failed result whose reason holds terminal commands, as a sweep would. The script
 * checks that TERM=dumb and NO_COLOR get no cursor control at all and that the reason's
 * commands reach the terminal escaped either way. */
#include "cli/progress.h"
#include "common/record.h"
#include "common/wire.h"
#include <stdio.h>
#include <string.h>

int main(void)
{
    tb_progress r = { tb_progress_can_draw(), 0, tb_progress_now_s(), 0 };
    printf("draw=%d\n", r.tty);
    fflush(stdout);
    tb_variant_info v;
    memset(&v, 0, sizeof v);
    snprintf(v.name, sizeof v.name, "fixture_variant");
    tb_shape s = { .m = 64, .n = 64, .k = 64, .batch = 1, .op = TB_OP_GEMM };
    tb_measurement m;
    tb_measurement_init(&m);
    m.status = TB_STATUS_CRASHED;
    snprintf(m.reason, sizeof m.reason, "died \x1b]0;pwned\x07\x1b[2J here");
    tb_progress_status(&r, &v, &s, 0, 2);
    tb_progress_result(&r, &v, &s, &m, 1, 2);
    tb_progress_clear(&r);
    return 0;
}
