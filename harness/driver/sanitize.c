/* sanitize.c - the --sanitize pass of one variant (see sanitize.h). */
#define _GNU_SOURCE
#include "driver/sanitize.h"
#include "driver/spawn.h"
#include "driver/worker_job.h"
#include "common/wire.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The --sanitize pass of one variant: a worker under compute-sanitizer validates it once
 * (no timing); the verdict is the tool's error summary. */
void tb_sweep_sanitize_one(const char *worker, const tb_sweep_opts *o, const tb_problem *prob,
                         const tb_catalog *cat, size_t vi, uint64_t seed, char *verdict,
                         size_t vlen, int *bad)
{
    char msg[TB_MSG_LEN];
    char tool[32];
    snprintf(tool, sizeof tool, "%s", o->sanitize);
    char *argv[] = { (char *)o->sanitizer, (char *)"--tool", tool, (char *)"--error-exitcode",
                     (char *)"86", (char *)"--print-limit", (char *)"20",
                     (char *)"--target-processes", (char *)"all",
                     /* padding after every allocation: a write just past D must not land in
                      * the next allocation, where memcheck would take it for valid */
                     (char *)"--padding", (char *)"65536", (char *)worker,
                     (char *)"measure", NULL };
    tb_proc p;
    *bad = 0;
    if (tb_proc_start(&p, o->sanitizer, argv, msg, sizeof msg)) {
        snprintf(verdict, vlen, "%s: not run: %s", tool, msg);
        return;
    }
    int *one = calloc(cat->n, sizeof *one);
    one[vi] = 1;
    cJSON *job = tb_worker_job_json(o, prob, cat, one, cat->n, seed);
    free(one);
    cJSON_AddNumberToObject(job, "validate_only", 1);
    cJSON_ReplaceItemInObject(job, "trials", cJSON_CreateNumber(2));
    tb_wire_send(p.in_fd, job);
    cJSON_Delete(job);
    tb_proc_close_input(&p);
    char *line;
    double deadline = tb_now() + 600.0;
    int r;
    while ((r = tb_proc_next(&p, deadline, &tb_sweep_stop, &line)) == 1) free(line);
    if (r != 0) tb_proc_kill(&p);
    tb_proc_wait(&p, 30.0);
    /* "========= ERROR SUMMARY: 3 errors" is the last thing the tool prints */
    const char *sum = strstr(p.log_tail, "ERROR SUMMARY:");
    long nerr = sum ? strtol(sum + 14, NULL, 10) : -1;
    const char *first = strstr(p.log_tail, "========= ");
    char firstline[160] = "";
    if (first && nerr > 0) {
        const char *e = strchr(first, '\n');
        snprintf(firstline, sizeof firstline, "%.*s", (int)(e ? e - first - 10 : 120), first + 10);
    }
    if (r == -1) snprintf(verdict, vlen, "%s: timed out after 600 s", tool);
    else if (nerr < 0) {
        char how[96];
        tb_proc_describe_exit(&p, how, sizeof how);
        snprintf(verdict, vlen, "%s: no summary (worker %s)", tool, how);
    } else {
        snprintf(verdict, vlen, "%s: %ld error%s%s%s", tool, nerr, nerr == 1 ? "" : "s",
                 firstline[0] ? ": " : "", firstline);
        *bad = nerr > 0;
    }
    tb_worker_wait_context_gone(p.pid, &(tb_sweep_report){ 0 });
    tb_proc_free(&p);
}
