/* zoo_ctor_segv.c - zoo member (attribution/): its constructor dies of SIGSEGV before it prints
 * anything. Probed after zoo_ctor_print.so, its refusal must say it was killed by signal 11 and
 * quote nothing zoo_ctor_print printed. */
#include <signal.h>
#include <tilebench/variant.h>

__attribute__((constructor)) static void zoo_die_at_load(void)
{
    raise(SIGSEGV);
}

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index);

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi; (void)index;
    return NULL;
}
