/* cmd_submit.c - tilebench submit: a stored run sent to a leaderboard server as a submission
 * (docs/submission.md) through client/upload.c. The token comes from TILEBENCH_TOKEN or a file
 * (--token-file), never from a flag a process list would show. --dry-run prints the document
 * and sends nothing. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "client/upload.h"
#include "report/submission.h"
#include "store/store.h"
#include "common/tb.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void help(void)
{
    printf(
"usage: tilebench submit --server URL [--db FILE] [--run ID] [--token-file FILE] [options]\n"
"\n"
"Send a stored run to a leaderboard server as a submission (docs/submission.md): POST\n"
"URL/api/v1/submissions over https with TLS verification, a bearer token, and an idempotency\n"
"key (the document's SHA-256, so a retried or repeated upload never counts twice). Network\n"
"errors and 5xx answers are retried with exponential backoff; a 4xx answer is final and its\n"
"reason is printed. No GPU needed.\n"
"\n"
"  --server URL       the leaderboard (https://...; http:// only for 127.0.0.1 or localhost)\n"
"  --db FILE          database (default " TB_DEFAULT_DB ")\n"
"  --run ID           run (default: the newest)\n"
"  --token-file FILE  read the token from FILE (first line); else TILEBENCH_TOKEN\n"
"  --ca-file FILE     trust this CA bundle instead of the system's\n"
"  --timeout S        per attempt (default 30)   --retries N  after the first (default 3)\n"
"  --dry-run          print the submission and send nothing (no token needed)\n"
"\n"
"exit status: 0 accepted (the id is printed), 1 refused or not reached, 2 usage error.\n"
"\n"
"examples:\n"
"  tilebench submit --server https://leaderboard.example.org --dry-run\n"
"  TILEBENCH_TOKEN=... tilebench submit --server https://leaderboard.example.org --run 3\n");
}

/* The first line of path, without its newline; warns when others may read the file. */
static int read_token(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return tb_cli_error("cannot read token file '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        tb_cli_warn("token file '%s' may be read by others (mode %03o): chmod 600 it", path,
                    (unsigned)(st.st_mode & 0777));
    if (!fgets(out, (int)cap, f)) out[0] = 0;
    fclose(f);
    out[strcspn(out, "\r\n")] = 0;
    if (!out[0]) return tb_cli_error("token file '%s' is empty", path);
    return 0;
}

int cmd_submit(int argc, char **argv, const tb_paths *paths)
{
    (void)paths;
    enum { O_SERVER = 256, O_DB, O_RUN, O_TOKFILE, O_CA, O_TIMEOUT, O_RETRIES, O_DRY };
    static const struct option opts[] = {
        { "server", required_argument, 0, O_SERVER }, { "db", required_argument, 0, O_DB },
        { "run", required_argument, 0, O_RUN }, { "token-file", required_argument, 0, O_TOKFILE },
        { "ca-file", required_argument, 0, O_CA }, { "timeout", required_argument, 0, O_TIMEOUT },
        { "retries", required_argument, 0, O_RETRIES }, { "dry-run", no_argument, 0, O_DRY },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = TB_DEFAULT_DB, *token_file = NULL;
    long long run = 0, retries;
    int dry = 0, c;
    tb_upload_opts uo;
    tb_upload_opts_default(&uo);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_SERVER: uo.server = optarg; break;
        case O_DB: db = optarg; break;
        case O_RUN: if (tb_cli_int("--run", optarg, 1, INT64_MAX, &run)) return 2; break;
        case O_TOKFILE: token_file = optarg; break;
        case O_CA: uo.ca_file = optarg; break;
        case O_TIMEOUT: if (tb_cli_double("--timeout", optarg, 0.1, 600, &uo.timeout_s)) return 2; break;
        case O_RETRIES: if (tb_cli_int("--retries", optarg, 0, 10, &retries)) return 2; uo.retries = (int)retries; break;
        case O_DRY: dry = 1; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("submit", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'submit'", argv[optind]);
    if (!dry && !uo.server) return tb_cli_error("submit needs --server URL (or --dry-run)");
    char token[512] = "";
    if (!dry) {
        if (token_file) { if (read_token(token_file, token, sizeof token)) return 2; }
        else if (getenv("TILEBENCH_TOKEN")) snprintf(token, sizeof token, "%s", getenv("TILEBENCH_TOKEN"));
        if (!token[0]) return tb_cli_error("submit needs a token: set TILEBENCH_TOKEN or give --token-file FILE");
        uo.token = token;
    }
    tb_store *st;
    int64_t id;
    int rc = tb_cli_open_run(db, run, &st, &id);
    if (rc) return rc;
    char msg[TB_MSG_LEN], *doc = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&doc, &n);
    if (!mem) { tb_store_close(st); return tb_cli_error("out of memory"); }
    rc = tb_submission_write(st, id, mem, msg, sizeof msg);
    fclose(mem);
    tb_store_close(st);
    if (rc) { free(doc); return tb_cli_fail(rc, msg); }
    if (dry) {
        fputs(doc, stdout);
        free(doc);
        return 0;
    }
    tb_upload_result r;
    rc = tb_upload(&uo, doc, n, &r, msg, sizeof msg);
    free(doc);
    if (rc) {
        tb_cli_error("%s", msg);
        return rc == TB_EUSAGE && r.status >= 400 ? TB_EXIT_FAIL : tb_cli_exit_for(rc);
    }
    printf("run %lld submitted to %s: submission %s (idempotency key %.16s...)\n", (long long)id,
           uo.server, r.id[0] ? r.id : "?", r.key);
    return 0;
}
