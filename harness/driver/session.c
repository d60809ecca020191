/* session.c - a worker kept alive across the jobs of one problem (see session.h): the key a job
 * is served under, taking and giving back the live worker, and ending it. */
#define _GNU_SOURCE
#include "driver/session.h"
#include "common/tb.h"
#include <stdlib.h>
#include <string.h>

void tb_shape_session_open(tb_shape_session *s)
{
    memset(s, 0, sizeof *s);
    s->p.pid = -1;
    s->p.in_fd = s->p.rec_fd = s->p.log_fd = -1;
}

char *tb_shape_session_key(const cJSON *job)
{
    cJSON *c = cJSON_Duplicate(job, 1);
    if (!c) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(c, "variants");
    cJSON_DeleteItemFromObjectCaseSensitive(c, "more");
    if (cJSON_GetObjectItemCaseSensitive(c, "keep_worker")) {   /* any problem, any seed */
        cJSON_DeleteItemFromObjectCaseSensitive(c, "problem");
        cJSON_DeleteItemFromObjectCaseSensitive(c, "seed");
    }
    char *t = cJSON_PrintUnformatted(c);
    cJSON_Delete(c);
    char *k = t ? strdup(t) : NULL;
    cJSON_free(t);
    return k;
}

int tb_shape_session_take(tb_shape_session *s, const char *key, tb_proc *p, char **env_line)
{
    *env_line = NULL;
    if (!s->live) return 0;
    if (!key || !s->key || strcmp(key, s->key)) {
        tb_shape_session_close(s);
        return 0;
    }
    *p = s->p;
    s->live = 0;
    if (s->env_line) *env_line = strdup(s->env_line);
    return 1;
}

void tb_shape_session_keep(tb_shape_session *s, const tb_proc *p, const char *key)
{
    if (s->live) tb_shape_session_close(s);   /* not expected: one worker at a time */
    free(s->key);
    s->key = key ? strdup(key) : NULL;
    s->p = *p;
    s->live = 1;
}

void tb_shape_session_env(tb_shape_session *s, const char *line)
{
    free(s->env_line);
    s->env_line = line && line[0] ? strdup(line) : NULL;
}

double tb_shape_session_close(tb_shape_session *s)
{
    double took = 0;
    if (s->live) {
        const double t0 = tb_now();
        tb_proc_close_input(&s->p);         /* end of file: the worker's session is over */
        char *line = NULL;                  /* it sends nothing more; drain until it closes */
        while (tb_proc_next(&s->p, t0 + 30.0, NULL, &line) == 1) free(line);
        tb_proc_wait(&s->p, 30.0 - (tb_now() - t0) > 1.0 ? 30.0 - (tb_now() - t0) : 1.0);
        tb_proc_free(&s->p);
        took = tb_now() - t0;
        s->live = 0;
    }
    free(s->key);
    free(s->env_line);
    s->key = s->env_line = NULL;
    return took;
}
