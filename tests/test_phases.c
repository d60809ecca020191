/* test_phases.c - harness/common/phases.c: where a sweep's wall time went, as JSON (round trip,
 * refusals) and as one line for people (longest first, small phases left out, "other"). */
#include "tb_test.h"
#include "common/phases.h"
#include "common/tb.h"
#include <math.h>
#include <string.h>

int main(void)
{
    char msg[TB_MSG_LEN], buf[1024];
    tb_phases p, q;
    TB_CASE("phases-1.1", "JSON round trip keeps every phase and the total") {
        memset(&p, 0, sizeof p);
        for (int i = 0; i < TB_PH_COUNT; i++) p.s[i] = 0.25 * (i + 1);
        p.total_s = 20;
        TB_CHECK(tb_phases_to_json(&p, buf, sizeof buf) == TB_OK);
        TB_CHECK(strstr(buf, "\"worker_start_s\":0.7500") != NULL);
        TB_CHECK(tb_phases_from_json(buf, &q, msg, sizeof msg) == TB_OK);
        for (int i = 0; i < TB_PH_COUNT; i++) TB_CHECK(fabs(q.s[i] - p.s[i]) < 1e-9);
        TB_CHECK(fabs(q.total_s - 20) < 1e-9);
    }
    TB_CASE("phases-1.2", "a buffer too small is refused, never a cut-off object") {
        TB_CHECK(tb_phases_to_json(&p, buf, 40) == TB_EUSAGE && buf[0] == 0);
    }
    TB_CASE("phases-1.3", "not an object, a negative, a string or a non-finite time is refused; missing keys are 0") {
        TB_CHECK(tb_phases_from_json("[1]", &q, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_phases_from_json("{\"timing_s\":-1}", &q, msg, sizeof msg) == TB_EUSAGE && strstr(msg, "timing_s"));
        TB_CHECK(tb_phases_from_json("{\"energy_s\":\"1\"}", &q, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_phases_from_json("{\"store_s\":1e999}", &q, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_phases_from_json(NULL, &q, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_phases_from_json("{\"timing_s\":2.5}", &q, msg, sizeof msg) == TB_OK &&
                 q.s[TB_PH_TIMING] == 2.5 && q.s[TB_PH_STORE] == 0 && q.total_s == 0);
    }
    TB_CASE("phases-2.1", "one line: longest first, under 0.05 s left out, the rest is 'other'") {
        memset(&p, 0, sizeof p);
        p.s[TB_PH_TIMING] = 40;
        p.s[TB_PH_ENERGY] = 18;
        p.s[TB_PH_VALIDATION] = 12;
        p.s[TB_PH_STORE] = 0.01;
        p.total_s = 80;
        tb_phases_format(&p, buf, sizeof buf);
        printf("  %s\n", buf);
        TB_CHECK(!strcmp(buf, "80.0 s: timing 40.0 s (50 %), energy 18.0 s (22 %), validation 12.0 s (15 %), other 10.0 s"));
        p.total_s = 0;   /* unknown total: the sum, no 'other' */
        tb_phases_format(&p, buf, sizeof buf);
        TB_CHECK(!strncmp(buf, "70.0 s: timing", 14) && !strstr(buf, "other"));
    }
    TB_CASE("phases-2.2", "a small buffer is cut, never overrun") {
        char small[24];
        memset(small, 'x', sizeof small);
        tb_phases_format(&p, small, 16);
        TB_CHECK(strlen(small) < 16 && small[17] == 'x');
    }
    TB_CASE("phases-2.3", "adding sums phase by phase") {
        memset(&q, 0, sizeof q);
        tb_phases_add(&q, &p);
        tb_phases_add(&q, &p);
        TB_CHECK(q.s[TB_PH_TIMING] == 80 && q.s[TB_PH_ENERGY] == 36);
    }
    return tb_test_done();
}
