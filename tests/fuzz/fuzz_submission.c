/* fuzz_submission.c - libFuzzer target for the submission parser (harness/format/
 * submission_parse.c): any bytes in, no crash, no leak, no undefined behaviour, and a parsed
 * document always frees cleanly and goes through the plausibility check (peaks by dtypes).
 * Built and run by tests/fuzz_submission.sh with clang's
 * -fsanitize=fuzzer,address,undefined; its seed corpus is tests/fuzz/corpus-submission/. */
#include "format/submission_parse.h"
#include "common/tb.h"
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_submission s;
    char msg[TB_MSG_LEN];
    if (tb_submission_parse((const char *)data, size, &s, msg, sizeof msg) == TB_OK) {
        /* and the leaderboard's check of what parsed (the peak of each result's dtypes) */
        tb_submission_plausible(&s, 0, msg, sizeof msg);
        tb_submission_plausible(&s, 1, msg, sizeof msg);
        tb_submission_free(&s);
    }
    return 0;
}
