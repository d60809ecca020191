/* store_model.c - the fitted models of tilebench search (schema 6, table search_models): one
 * row per fit, read back by GPU model and family, newest first. Owns only these two
 * statements; what a model holds is driver/model.c's (its JSON is stored as text). */
#define _POSIX_C_SOURCE 200809L
#include "store/store_int.h"
#include "common/tb.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

int tb_store_put_search_model(tb_store *s, const char *gpu_name, const char *family, int n_obs,
                              double error, const char *model_json, char *msg, size_t len)
{
    if (s->read_only) return tb_fail(msg, len, TB_EDB, "cannot write to '%s': opened read-only", s->path);
    if (!gpu_name || !gpu_name[0] || !family || !family[0] || !model_json)
        return tb_fail(msg, len, TB_EINTERNAL, "cannot record a search model: no GPU name or family");
    char now[32] = "";
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "INSERT INTO search_models (created_at, gpu_name, family, n_obs, "
                           "error, model_json) VALUES (?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
        return tbs_db_fail(s, msg, len, "record a search model");
    sqlite3_bind_text(st, 1, now, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, gpu_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, family, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 4, n_obs);
    if (error == error) sqlite3_bind_double(st, 5, error);
    else sqlite3_bind_null(st, 5);
    sqlite3_bind_text(st, 6, model_json, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st) == SQLITE_DONE ? TB_OK : tbs_db_fail(s, msg, len, "record a search model");
    sqlite3_finalize(st);
    return rc;
}

int tb_store_latest_search_model(tb_store *s, const char *gpu_name, const char *family,
                                 char *model_json, size_t json_cap, int *n_obs, char *created_at,
                                 size_t created_cap, int *found, char *msg, size_t len)
{
    *found = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT model_json, n_obs, created_at FROM search_models "
                           "WHERE gpu_name = ? AND family = ? ORDER BY id DESC LIMIT 1", -1, &st, NULL) != SQLITE_OK)
        return tbs_db_fail(s, msg, len, "read the search models");
    sqlite3_bind_text(st, 1, gpu_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, family, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(st), rc = TB_OK;
    if (step == SQLITE_ROW) {
        tbs_col_text(st, 0, model_json, json_cap);
        *n_obs = sqlite3_column_int(st, 1);
        tbs_col_text(st, 2, created_at, created_cap);
        *found = 1;
    } else if (step != SQLITE_DONE) {
        rc = tbs_db_fail(s, msg, len, "read the search models");
    }
    sqlite3_finalize(st);
    return rc;
}
