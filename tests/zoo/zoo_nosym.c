/* zoo_nosym.c - zoo member: a well-formed shared object that exports one function, but not
 * tilebench_variant_query. dlopen succeeds; the loader refuses the file because the entry
 * symbol is missing (dlsym returns NULL), and must dlclose it. */
#include <tilebench/variant.h>

TB_EXPORT int zoo_nosym_not_the_entry(void);

TB_EXPORT int zoo_nosym_not_the_entry(void)
{
    return 42;
}
