/* out.c - the records' way out, for every mode of tilebench-worker: the fd they go to and
 * the sending (see out.h). */
#define _GNU_SOURCE
#include "worker/out.h"
#include "worker/worker_common.h"

int tbw_out_fd = 1;

void tbw_out_obj(cJSON *o) { tbw_send(tbw_out_fd, o); }
void tbw_out_simple(const char *type, const char *key, const char *val)
{
    tbw_send_simple(tbw_out_fd, type, key, val);
}
