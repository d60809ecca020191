/* paths.h - where tilebench finds its worker, variants and shape sets: beside its own
 * executable (bin/ -> ../lib/tilebench/variants, ../share/tilebench/shapes), which holds
 * for the build tree and an install alike, with the source tree's results/shapes as a
 * fallback for the build tree. */
#ifndef TB_PATHS_H
#define TB_PATHS_H
typedef struct tb_paths {
    char exe_dir[1024];
    char worker[1100];
    char variants_dir[1100];
    char shapes_dir[1100];
} tb_paths;
/* Fills p; TILEBENCH_WORKER / TILEBENCH_VARIANTS / TILEBENCH_SHAPES override. */
void tb_paths_init(tb_paths *p);
#endif
