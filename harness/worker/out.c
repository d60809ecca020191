/* out.c - the records' way out, for every mode of tilebench-worker: the fd they go to and
 * the sending (see out.h). */
#define _GNU_SOURCE
#include "worker/out.h"
#include "worker/worker_common.h"
#include "common/wire.h"
#include "common/tb.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int tbw_out_fd = 1;

void tbw_out_obj(cJSON *o) { tbw_send(tbw_out_fd, o); }
void tbw_out_simple(const char *type, const char *key, const char *val)
{
    tbw_send_simple(tbw_out_fd, type, key, val);
}

void tbw_out_done(const tb_phases *ph)
{
    char j[1024];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "done");
    if (tb_phases_to_json(ph, j, sizeof j) == TB_OK) cJSON_AddRawToObject(o, "phases", j);
    tbw_out_obj(o);
}

void tbw_log_mark(void)
{
    static const char mark[] = "\n" TB_LOG_MARK "\n";
    fflush(NULL);
    ssize_t r = write(2, mark, sizeof mark - 1);
    (void)r;
}
