/* zoo_slowsetup_fail.cu - zoo member: setup() takes 200 ms, then fails with the message
 * "planted setup failure" and sets no state. The harness reports status error with that
 * message in the reason, never calls launch() or teardown() for the problem, and goes on. */
#include <time.h>
#include "zoo_gemm.cuh"

static int slowsetup_fail_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                                size_t msg_len)
{
    (void)p; (void)stream; (void)state;
    struct timespec pause = { 0, 200 * 1000 * 1000 };
    nanosleep(&pause, NULL);
    if (msg && msg_len)
        snprintf(msg, msg_len, "planted setup failure");
    return 1;
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_slowsetup_fail", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, zoo_launch_correct, slowsetup_fail_setup, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
