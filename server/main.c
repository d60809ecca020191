/* main.c - tilebench-server: a community leaderboard of tilebench submissions (libmicrohttpd;
 * an SQLite file, or PostgreSQL for several server processes). `tilebench-server [--address A]
 * [--port P] [--db FILE|postgresql://...]` serves the JSON API and the pages until SIGTERM or
 * SIGINT (it finishes the requests in flight, then exits 0); `tilebench-server token
 * add|list|revoke NAME [--db ...]` manages the bearer tokens, stored hashed (the new token is
 * printed once, by add); `tilebench-server copy-db --from FILE --to postgresql://...` moves a
 * community's SQLite file into an empty PostgreSQL database. A PostgreSQL password comes from
 * PGPASSWORD, PGPASSFILE or --db-password-file, never from the command line. docs/server.md. */
#define _GNU_SOURCE
#include "api.h"
#include "store.h"
#include "common/tb.h"
#include "format/submission_parse.h"
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <openssl/rand.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_DB "tilebench-server.db"

static volatile sig_atomic_t stop;
static void on_stop(int sig) { (void)sig; stop = 1; }

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tilebench-server [--address A] [--port P] [--db FILE|URI] [--max-body BYTES] [--rate R]\n"
        "                        [--idle-timeout S] [--body-timeout S] [--shapes-dir D]\n"
        "                        [--allow-unknown-gpu] [--db-password-file F] [--wait-db S]\n"
        "       tilebench-server token add|list|revoke [NAME] [--db FILE|URI]\n"
        "       tilebench-server copy-db --from FILE --to URI\n"
        "\n"
        "Serve a tilebench leaderboard: POST /api/v1/submissions (bearer token, idempotency key),\n"
        "GET /api/v1/submissions/{id}, GET /api/v1/leaderboards, GET /api/v1/leaderboards/SET/GPU\n"
        "(the GPU model's submissions ranked on a shape set), and the same as HTML pages from /.\n"
        "Listens on 127.0.0.1:8080 by default; one log line per request on stderr; SIGTERM or\n"
        "SIGINT stops it after the requests in flight. Tokens are stored hashed: `token add NAME`\n"
        "prints the new token once.\n"
        "\n"
        "  --address A     IPv4 address to listen on (default 127.0.0.1)\n"
        "  --port P        TCP port (default 8080; 0 picks a free one, printed on stdout)\n"
        "  --db FILE       the server's own SQLite file (default " DEFAULT_DB ")\n"
        "  --db URI        a PostgreSQL database instead (postgresql://USER@HOST[:PORT]/DB[?sslmode=...]),\n"
        "                  which several server processes may share; a URI with a password in it is\n"
        "                  refused: the password comes from PGPASSWORD, PGPASSFILE (~/.pgpass) or\n"
        "  --db-password-file F  the first line of F\n"
        "  --wait-db S     PostgreSQL unreachable at start: try again for S seconds (default 0: exit 2)\n"
        "  --max-body N    larger request bodies get 413 (default 16 MiB)\n"
        "  --rate R        submissions per token and minute before 429 (default 30; 0: no limit)\n"
        "  --idle-timeout S  a connection silent for S seconds is closed (default 10)\n"
        "  --body-timeout S  a request body not complete S seconds after its headers is cut\n"
        "                  (the connection closed; default 60; 0: no limit)\n"
        "  --shapes-dir D  the shape sets leaderboards rank on (NAME.txt files; default: the\n"
        "                  installed share/tilebench/shapes)\n"
        "  --allow-unknown-gpu  take submissions from a GPU whose peak this server does not know\n"
        "                  (a compute capability outside its table, or no SM count) with their\n"
        "                  rates unchecked; without it they get 422\n"
        "\n"
        "copy-db copies every token (hashed) and submission of an SQLite file into an empty\n"
        "PostgreSQL database, with their ids, in one transaction, and prints both sides' row counts.\n");
}

static void print_line(void *ctx, const char *line) { (void)ctx; printf("%s\n", line); }

static int hex_digit(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* %XX decoding of a URL's path and query, as libmicrohttpd's own but for %00, which stays as it
 * is: a NUL would end the path early, and /api/v1/submissions/1%00junk would read as
 * submission 1. Returns the new length (the text shrinks in place). */
static size_t unescape_url(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls; (void)c;
    char *w = s;
    for (const char *r = s; *r;) {
        int hi = r[0] == '%' ? hex_digit(r[1]) : -1, lo = hi >= 0 ? hex_digit(r[2]) : -1;
        if (lo >= 0 && (hi || lo)) { *w++ = (char)(hi * 16 + lo); r += 3; }
        else *w++ = *r++;
    }
    *w = 0;
    return (size_t)(w - s);
}

/* the store's open is waiting for the database (--wait-db): said once */
static void waiting(void *ctx, const char *why)
{
    fprintf(stderr, "tilebench-server: waiting up to %g s for the database: %s\n", *(const double *)ctx, why);
}

/* The first line of the password file into out (its newline dropped): 0, or -1 with msg (which
 * names the file, never what is in it). */
static int read_password(const char *path, char *out, size_t len, char *msg, size_t msg_len)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(msg, msg_len, "cannot read the password file '%s': %s", path, strerror(errno)); return -1; }
    int ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    if (ok) out[strcspn(out, "\r\n")] = 0;
    if (!ok || !*out) { snprintf(msg, msg_len, "the password file '%s' holds no password on its first line", path); return -1; }
    return 0;
}

static int token_cmd(int argc, char **argv, const char *db, const tbs_store_opts *o)
{
    char msg[TB_MSG_LEN];
    tbs_store *s;
    if (tbs_store_open(db, o, &s, msg, sizeof msg)) { fprintf(stderr, "tilebench-server: error: %s\n", msg); return 2; }
    int rc = 0;
    const char *what = argc > 0 ? argv[0] : "";
    if (!strcmp(what, "list")) {
        rc = tbs_token_list(s, print_line, NULL, msg, sizeof msg) ? 1 : 0;
    } else if ((!strcmp(what, "add") || !strcmp(what, "revoke")) && argc == 2 && argv[1][0] &&
               strlen(argv[1]) < 64 && strspn(argv[1], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == strlen(argv[1])) {
        if (!strcmp(what, "add")) {
            unsigned char raw[24];
            char token[64], hash[65];
            if (RAND_bytes(raw, sizeof raw) != 1) { snprintf(msg, sizeof msg, "no random bytes"); rc = 1; }
            for (size_t i = 0; !rc && i < sizeof raw; i++) snprintf(token + 2 * i, 3, "%02x", raw[i]);
            int64_t id = 0;
            if (!rc) { tbs_token_hash(token, hash); rc = tbs_token_add(s, argv[1], hash, &id, msg, sizeof msg) ? 1 : 0; }
            if (!rc) printf("%s\n", token);
        } else {
            int n = 0;
            rc = tbs_token_revoke(s, argv[1], &n, msg, sizeof msg) ? 1 : 0;
            if (!rc && !n) { snprintf(msg, sizeof msg, "no live token named '%s'", argv[1]); rc = 1; }
        }
    } else {
        tbs_store_close(s);
        fprintf(stderr, "tilebench-server: error: token add NAME | list | revoke NAME (NAME: letters, digits, _ . -)\n");
        return 2;
    }
    tbs_store_close(s);
    if (rc) fprintf(stderr, "tilebench-server: error: %s\n", msg);
    return rc;
}

/* copy-db --from FILE --to URI: 0 copied, 1 the copy failed (nothing written), 2 usage or a
 * database that cannot be opened */
static int copy_db(const char *from, const char *to, const tbs_store_opts *o)
{
    if (!from || !to) { fprintf(stderr, "tilebench-server: error: copy-db --from FILE --to postgresql://...\n"); return 2; }
    if (tbs_store_is_postgres(from) || !tbs_store_is_postgres(to)) {
        fprintf(stderr, "tilebench-server: error: copy-db copies an SQLite file (--from FILE) into PostgreSQL (--to postgresql://...)\n");
        return 2;
    }
    if (access(from, R_OK)) { fprintf(stderr, "tilebench-server: error: cannot read '%s': %s\n", from, strerror(errno)); return 2; }
    char msg[TB_MSG_LEN];
    tbs_store *src = NULL, *dst = NULL;
    if (tbs_store_open(from, NULL, &src, msg, sizeof msg) || tbs_store_open(to, o, &dst, msg, sizeof msg)) {
        fprintf(stderr, "tilebench-server: error: %s\n", msg);
        tbs_store_close(src);
        return 2;
    }
    tbs_store_counts a = { 0 }, b = { 0 };
    int rc = tbs_store_count(src, &a, msg, sizeof msg);
    if (!rc) rc = tbs_store_copy(src, dst, msg, sizeof msg);
    if (!rc) rc = tbs_store_count(dst, &b, msg, sizeof msg);
    if (!rc) {
        printf("from %s (SQLite): %lld tokens, %lld submissions\n", from, (long long)a.tokens, (long long)a.submissions);
        printf("to PostgreSQL: %lld tokens, %lld submissions\n", (long long)b.tokens, (long long)b.submissions);
        if (a.tokens != b.tokens || a.submissions != b.submissions) { snprintf(msg, sizeof msg, "the counts differ"); rc = -1; }
    }
    tbs_store_close(src);
    tbs_store_close(dst);
    if (rc) fprintf(stderr, "tilebench-server: error: %s\n", msg);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "address", required_argument, 0, 'a' }, { "port", required_argument, 0, 'p' },
        { "db", required_argument, 0, 'd' }, { "max-body", required_argument, 0, 'm' },
        { "rate", required_argument, 0, 'r' }, { "shapes-dir", required_argument, 0, 's' },
        { "idle-timeout", required_argument, 0, 'i' }, { "body-timeout", required_argument, 0, 'b' },
        { "allow-unknown-gpu", no_argument, 0, 'u' }, { "help", no_argument, 0, 'h' },
        { "version", no_argument, 0, 'V' }, { "db-password-file", required_argument, 0, 'P' },
        { "wait-db", required_argument, 0, 'w' }, { "from", required_argument, 0, 'F' },
        { "to", required_argument, 0, 'T' }, { 0, 0, 0, 0 } };
    const char *address = "127.0.0.1", *db = DEFAULT_DB;
    long port = 8080;
    long long max_body = TB_SUB_MAX_BYTES;
    double rate = 30;
    long idle_timeout = 10, body_timeout = 60;
    const char *shapes_dir = NULL, *password_file = NULL, *from = NULL, *to = NULL;
    double wait_db = 0;
    int c, allow_unknown_gpu = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'a': address = optarg; break;
        case 'p': port = strtol(optarg, &end, 10);
                  if (!end || *end || port < 0 || port > 65535) { fprintf(stderr, "tilebench-server: error: invalid --port '%s'\n", optarg); return 2; }
                  break;
        case 'd': db = optarg; break;
        case 'm': max_body = strtoll(optarg, &end, 10);
                  if (!end || *end || max_body < 1 || max_body > (64ll << 20)) { fprintf(stderr, "tilebench-server: error: invalid --max-body '%s'\n", optarg); return 2; }
                  break;
        case 'r': rate = strtod(optarg, &end);
                  if (!end || *end || !(rate >= 0 && rate <= 1e6)) { fprintf(stderr, "tilebench-server: error: invalid --rate '%s'\n", optarg); return 2; }
                  break;
        case 's': shapes_dir = optarg; break;
        case 'P': password_file = optarg; break;
        case 'F': from = optarg; break;
        case 'T': to = optarg; break;
        case 'w': wait_db = strtod(optarg, &end);
                  if (!end || *end || !(wait_db >= 0 && wait_db <= 86400)) { fprintf(stderr, "tilebench-server: error: invalid --wait-db '%s'\n", optarg); return 2; }
                  break;
        case 'u': allow_unknown_gpu = 1; break;
        case 'i': case 'b': {
            long v = strtol(optarg, &end, 10);
            if (!end || *end || v < (c == 'i' ? 1 : 0) || v > 3600) {
                fprintf(stderr, "tilebench-server: error: invalid --%s '%s'\n", c == 'i' ? "idle-timeout" : "body-timeout", optarg);
                return 2;
            }
            *(c == 'i' ? &idle_timeout : &body_timeout) = v;
            break;
        }
        case 'h': usage(stdout); return 0;
        case 'V': printf("tilebench-server %s\n", TB_VERSION); return 0;
        default: fprintf(stderr, "tilebench-server: error: unknown option '%s' (see --help)\n", argv[optind - 1]); return 2;
        }
    }
    char password[1024] = "", msg[TB_MSG_LEN];
    if (password_file && read_password(password_file, password, sizeof password, msg, sizeof msg)) {
        fprintf(stderr, "tilebench-server: error: %s\n", msg);
        return 2;
    }
    tbs_store_opts so = { .password = *password ? password : NULL, .wait_s = wait_db, .waiting = waiting, .ctx = &wait_db };
    if (optind < argc && !strcmp(argv[optind], "token")) {
        int rc = from || to ? (fprintf(stderr, "tilebench-server: error: --from and --to are copy-db's\n"), 2)
                           : token_cmd(argc - optind - 1, argv + optind + 1, db, &so);
        explicit_bzero(password, sizeof password);
        return rc;
    }
    if (optind < argc && !strcmp(argv[optind], "copy-db") && optind + 1 == argc) {
        int rc = copy_db(from, to, &so);
        explicit_bzero(password, sizeof password);
        return rc;
    }
    if (optind < argc) { fprintf(stderr, "tilebench-server: error: unexpected argument '%s'\n", argv[optind]); return 2; }
    if (from || to) { fprintf(stderr, "tilebench-server: error: --from and --to are copy-db's\n"); return 2; }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, address, &sa.sin_addr) != 1) { fprintf(stderr, "tilebench-server: error: invalid --address '%s'\n", address); return 2; }
    /* the shape sets: --shapes-dir, else the installed share/tilebench/shapes beside bin/ */
    tbs_sets sets;
    char exe_sets[4200] = "";
    if (!shapes_dir) {
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = 0;
            char *sl = strrchr(exe, '/');
            if (sl) { *sl = 0; snprintf(exe_sets, sizeof exe_sets, "%s/../share/tilebench/shapes", exe); }
        }
        shapes_dir = exe_sets;
    }
    if (tbs_sets_load(shapes_dir, &sets, msg, sizeof msg)) {
        fprintf(stderr, "tilebench-server: warning: %s: no leaderboards by shape set\n", msg);
        memset(&sets, 0, sizeof sets);
    }
    tbs_api api = { .max_body = (size_t)max_body, .log = stderr, .sets = &sets, .rate_per_min = rate,
                    .body_timeout_s = (double)body_timeout, .allow_unknown_gpu = allow_unknown_gpu };
    if (!(api.cache = tbs_cache_new())) { fprintf(stderr, "tilebench-server: error: out of memory\n"); return 2; }
    int opened = tbs_store_open(db, &so, &api.store, msg, sizeof msg);
    explicit_bzero(password, sizeof password);   /* the store keeps its own copy, for reconnecting */
    if (opened) {
        fprintf(stderr, "tilebench-server: error: %s\n", msg);
        tbs_cache_free(api.cache);
        return 2;
    }
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
        0, NULL, NULL, tbs_api_handle, &api,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_NOTIFY_COMPLETED, tbs_api_completed, &api,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape_url, NULL,
        MHD_OPTION_STRICT_FOR_CLIENT, (int)1,   /* HTTP/1.1 without Host, a space in a URL: 400 */
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)idle_timeout,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)256,
        MHD_OPTION_END);
    if (!d) { tbs_store_close(api.store); tbs_cache_free(api.cache); fprintf(stderr, "tilebench-server: error: cannot listen on %s:%ld\n", address, port); return 2; }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("listening on %s:%u\n", address, info ? info->port : (unsigned)port);
    fflush(stdout);
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_stop;
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    signal(SIGPIPE, SIG_IGN);
    while (!stop) pause();
    MHD_stop_daemon(d);   /* waits for the requests in flight */
    tbs_store_close(api.store);
    tbs_cache_free(api.cache);
    tbs_sets_free(&sets);
    fprintf(stderr, "tilebench-server: stopped\n");
    return 0;
}
