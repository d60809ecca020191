/* sass.h - which SASS targets run on which compute capability. Pure string logic, no CUDA:
 * the parent uses it to refuse variants for the GPU the worker reported. */
#ifndef TB_SASS_H
#define TB_SASS_H
#include <stddef.h>

/* Returns 1 if a library built for `sass` ("sm_90a", "sm_80,sm_90", "any") can run on
 * compute capability major.minor, else 0 with the reason in why:
 *  - "any": always (a wrapper with no kernels of its own);
 *  - "sm_XYa" (arch-specific): only on exactly X.Y;
 *  - "sm_XY", "sm_XYf": on X.y for every y >= Y (SASS is compatible within a major);
 *  - PTX ("compute_XY") does not count: a JIT-compiled kernel is not the one measured.
 * A malformed entry counts as nothing runnable (docs/writing-a-variant.md). */
int tb_sass_runs_on(const char *sass, int major, int minor, char *why, size_t why_len);
#endif
