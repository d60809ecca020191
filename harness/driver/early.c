/* early.c - the measuring worker started before the variants are probed (early.h): started,
 * its environment record read and kept, handed to the first shape's worker slot, or stopped. */
#define _GNU_SOURCE
#include "driver/early.h"
#include "common/tb.h"
#include "common/wire.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static struct {
    int have;
    tb_proc p;
    char device[80];
    char *env_line;
} early;

void tb_early_worker_drop(void)
{
    if (!early.have) return;
    early.have = 0;
    tb_proc_close_input(&early.p);   /* no job: it exits by itself (or is killed after 5 s) */
    tb_proc_wait(&early.p, 5.0);
    tb_proc_free(&early.p);
    free(early.env_line);
    early.env_line = NULL;
}

int tb_early_worker_start(const char *worker, const char *device, tb_environment *env,
                          char *msg, size_t len)
{
    static int registered;
    tb_early_worker_drop();
    char dev[80];
    snprintf(dev, sizeof dev, "%s", device);
    char *argv[] = { (char *)"tilebench-worker", (char *)"measure", (char *)"--device", dev, NULL };
    tb_proc p;
    int rc = tb_proc_start(&p, worker, argv, msg, len);
    if (rc) return rc;
    rc = tb_fail(msg, len, TB_ENOGPU, "no GPU: the worker reported nothing");
    char *env_line = NULL, *line = NULL;
    while (!env_line && tb_proc_next(&p, tb_now() + 120.0, NULL, &line) == 1) {
        cJSON *o = cJSON_Parse(line);
        if (!o) { free(line); continue; }
        const char *type = tb_json_str(o, "type", "");
        if (strcmp(type, "env") == 0) {
            rc = tb_wire_env_from_json(o, env, msg, len);
            if (rc == TB_OK) { env_line = line; line = NULL; }
        } else if (strcmp(type, "fatal") == 0) {
            rc = tb_fail(msg, len, TB_ENOGPU, "%s", tb_json_str(o, "error", "no GPU"));
        }
        free(line);
        line = NULL;
        cJSON_Delete(o);
        if (rc != TB_OK && strcmp(type, "fatal") == 0) break;
    }
    if (!env_line) {
        tb_proc_close_input(&p);
        tb_proc_wait(&p, 10.0);
        if (p.exited && WIFEXITED(p.wstatus) && WEXITSTATUS(p.wstatus) == 127) {
            char last[256];
            tb_proc_last_log_line(&p, last, sizeof last);
            rc = tb_fail(msg, len, TB_EWORKER, "%s", last[0] ? last : "cannot run the worker");
        }
        tb_proc_free(&p);
        return rc != TB_OK ? rc : tb_fail(msg, len, TB_ENOGPU, "no GPU: the worker reported nothing");
    }
    early.p = p;
    early.env_line = env_line;
    snprintf(early.device, sizeof early.device, "%s", device);
    early.have = 1;
    if (!registered) { atexit(tb_early_worker_drop); registered = 1; }
    return TB_OK;
}

int tb_early_worker_take(const char *device, tb_proc *p, char **env_line)
{
    if (!early.have || strcmp(early.device, device) != 0) return 0;
    early.have = 0;
    *p = early.p;
    *env_line = early.env_line;
    early.env_line = NULL;
    return 1;
}
