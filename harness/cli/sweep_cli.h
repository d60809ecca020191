/* sweep_cli.h - what `tilebench sweep` was asked (sweep_cli: the parsed command line), the
 * stopping spec it makes of its flags, and the options as the JSON stored with the run and
 * read back by --resume. Used by cmd_sweep.c; sweep_cli.c holds the code. */
#ifndef TB_SWEEP_CLI_H
#define TB_SWEEP_CLI_H
#include <stddef.h>
#include "cli/cli.h"
#include "driver/sweep_opts.h"

typedef struct sweep_cli {
    char *vp[TB_CLI_MAX_REPEAT], *inc[TB_CLI_MAX_REPEAT], *exc[TB_CLI_MAX_REPEAT], *shp[TB_CLI_MAX_REPEAT];
    size_t nvp, ninc, nexc, nshp;
    const char *db;
    long long resume;
    int quiet, progress, explicit_opts, plan_only, device_given;
    char devices[512];        /* --devices, as given ("" for none) */
    int shard_i, shard_n;     /* --shard I/N; shard_n 0: every shape */
    char stop_user[256];
    tb_sweep_opts o;
} sweep_cli;

/* The complete stopping spec in c->o.stop: the user's (or stdrel) with the shorthand flags'
 * values for the parameters it does not name. */
void tb_sweep_cli_stop_spec(sweep_cli *c);
/* The options as the JSON stored in the run (vp: the variant paths as expanded); a malloc'd
 * string (cJSON's), NULL when out of memory. */
char *tb_sweep_cli_options_json(const sweep_cli *c, char **vp, size_t nvp);
/* The options of a stored run back into c (strings strdup'd); 0, or -1 when js is not JSON or
 * its shard does not parse. */
int tb_sweep_cli_options_from_json(const char *js, sweep_cli *c);

#endif /* TB_SWEEP_CLI_H */
