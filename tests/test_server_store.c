/* test_server_store.c - the server's storage seam (server/store.c) without a PostgreSQL server:
 * which --db names PostgreSQL; the SQLite engine's generations (a model's moves with each of its
 * submissions stored, not with a replay, not with another model's; the all-models one with any)
 * and its per-token rate; the PostgreSQL engine's refusals before any connection (a URI holding
 * a password, never echoed; a malformed URI), an unreachable server (TBS_STORE_UNAVAILABLE at
 * once, one line naming the host and port, never the password; --wait-db waits and says so
 * once); copy-db's directions. The engine against a real server: tests/server_pg_*.{sh,py}. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "../server/store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* a loopback port nothing listens on (bound, then closed) */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t n = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || getsockname(fd, (struct sockaddr *)&a, &n)) return 1;
    close(fd);
    return ntohs(a.sin_port);
}

static int waited;
static void on_wait(void *ctx, const char *why) { (void)ctx; (void)why; waited++; }

int main(void)
{
    char msg[512], dir[] = "/tmp/tb-store-XXXXXX", path[600];
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/s.db", dir);

    TB_CASE("store-1.1", "postgresql:// and postgres:// name PostgreSQL; anything else is a file") {
        TB_CHECK(tbs_store_is_postgres("postgresql://h/db"));
        TB_CHECK(tbs_store_is_postgres("postgres://h/db"));
        TB_CHECK(tbs_store_is_postgres("PostgreSQL://h/db"));
        TB_CHECK(!tbs_store_is_postgres("server.db"));
        TB_CHECK(!tbs_store_is_postgres("./postgresql://x"));
        TB_CHECK(!tbs_store_is_postgres("host=h dbname=db"));
    }
    tbs_store *s = NULL;
    TB_CASE("store-2.1", "SQLite: a model's generation moves with its submissions only, the all-models one with any") {
        TB_CHECK(!tbs_store_open(path, NULL, &s, msg, sizeof msg));
        if (!s) { printf("FAIL store-2.1: cannot open the store: %s\n", msg); return 1; }
        TB_CHECK(!strcmp(tbs_store_engine(s), "SQLite"));
        int64_t tok = 0, id = 0, id2 = 0;
        int existed = 1;
        TB_CHECK(!tbs_token_add(s, "alice", "00ab", &tok, msg, sizeof msg) && tok == 1);
        uint64_t h0, a0, all0, h1, a1, all1;
        TB_CHECK(!tbs_board_generation(s, "H100", &h0, msg, sizeof msg));
        TB_CHECK(!tbs_board_generation(s, "A100", &a0, msg, sizeof msg));
        TB_CHECK(!tbs_board_generation(s, NULL, &all0, msg, sizeof msg));
        TB_CHECK(!tbs_submission_put(s, tok, "k1", "H100", "{}", 2, &id, &existed, msg, sizeof msg) && !existed);
        tbs_board_generation(s, "H100", &h1, msg, sizeof msg);
        tbs_board_generation(s, "A100", &a1, msg, sizeof msg);
        tbs_board_generation(s, NULL, &all1, msg, sizeof msg);
        TB_CHECK(h1 == h0 + 1 && all1 == all0 + 1);
        TB_CHECK(a1 == a0);   /* 256 slots: these two names do not share one */
        TB_CHECK(!tbs_submission_put(s, tok, "k1", "H100", "{}", 2, &id2, &existed, msg, sizeof msg) && existed && id2 == id);
        tbs_board_generation(s, "H100", &h0, msg, sizeof msg);
        tbs_board_generation(s, NULL, &all0, msg, sizeof msg);
        TB_CHECK(h0 == h1 && all0 == all1);   /* a replay stored nothing */
        tbs_store_counts n = { 0 };
        TB_CHECK(!tbs_store_count(s, &n, msg, sizeof msg) && n.tokens == 1 && n.submissions == 1);
    }
    TB_CASE("store-2.2", "SQLite: a token's rate is its own bucket; 0 is no limit") {
        int ok, taken = 0, other = 0;
        for (int i = 0; i < 5; i++) { TB_CHECK(!tbs_rate_take(s, 1, 3, &ok, msg, sizeof msg)); taken += ok; }
        TB_CHECK(taken == 3);
        TB_CHECK(!tbs_rate_take(s, 2, 3, &other, msg, sizeof msg) && other);
        for (int i = 0; i < 5; i++) { TB_CHECK(!tbs_rate_take(s, 1, 0, &ok, msg, sizeof msg) && ok); }
    }
    TB_CASE("store-2.3", "copy-db goes from SQLite into PostgreSQL only") {
        tbs_store *t = NULL;
        snprintf(path, sizeof path, "%s/t.db", dir);
        TB_CHECK(!tbs_store_open(path, NULL, &t, msg, sizeof msg));
        if (t) {
            TB_CHECK(tbs_store_copy(s, t, msg, sizeof msg) == -1);
            TB_CHECK_STR_CONTAINS(msg, "not SQLite into SQLite");
            tbs_store_close(t);
        }
    }
    tbs_store_close(s);
    s = NULL;
    TB_CASE("store-3.1", "a URI holding a password is refused before connecting, without echoing it") {
        const char *uris[] = { "postgresql://tb:hunter2-secret@127.0.0.1/db", "postgres://tb:hunter2-secret@[::1]:5432/db?sslmode=require",
                               "postgresql://127.0.0.1/db?sslmode=disable&password=hunter2-secret",
                               "postgresql:///db?host=/run/x&PASSWORD=hunter2-secret" };
        for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
            msg[0] = 0;
            TB_CHECK(tbs_store_open(uris[i], NULL, &s, msg, sizeof msg) == -1 && !s);
            TB_CHECK_STR_CONTAINS(msg, "holds a password");
            TB_CHECK(!strstr(msg, "hunter2"));
        }
        /* a user name alone, or a passfile, is no password */
        TB_CHECK(tbs_store_open("postgresql://tb@127.0.0.1:1/db?passfile=/nonexistent&connect_timeout=2", NULL, &s, msg, sizeof msg)
                 == TBS_STORE_UNAVAILABLE);
    }
    TB_CASE("store-3.2", "a malformed URI is refused") {
        TB_CHECK(tbs_store_open("postgresql://127.0.0.1/db?nosuchoption=1", NULL, &s, msg, sizeof msg) == -1);
        TB_CHECK_STR_CONTAINS(msg, "invalid PostgreSQL URI");
    }
    TB_CASE("store-3.3", "PostgreSQL unreachable: unavailable at once, one line naming host and port, not the password") {
        char uri[128], port[16];
        int p = closed_port();
        snprintf(uri, sizeof uri, "postgresql://tb@127.0.0.1:%d/db", p);
        snprintf(port, sizeof port, "port %d", p);
        setenv("PGPASSWORD", "env-secret-77", 1);
        tbs_store_opts o = { .password = "file-secret-88" };
        double t0 = now_s();
        TB_CHECK(tbs_store_open(uri, &o, &s, msg, sizeof msg) == TBS_STORE_UNAVAILABLE && !s);
        TB_CHECK(now_s() - t0 < 3);
        TB_CHECK_STR_CONTAINS(msg, "cannot connect to PostgreSQL at 127.0.0.1");
        TB_CHECK_STR_CONTAINS(msg, port);
        TB_CHECK(!strchr(msg, '\n') && !strstr(msg, "secret"));
        unsetenv("PGPASSWORD");
    }
    TB_CASE("store-3.4", "--wait-db: tries again for that long, says so once") {
        char uri[128];
        snprintf(uri, sizeof uri, "postgresql://tb@127.0.0.1:%d/db", closed_port());
        tbs_store_opts o = { .wait_s = 0.8, .waiting = on_wait };
        double t0 = now_s();
        waited = 0;
        TB_CHECK(tbs_store_open(uri, &o, &s, msg, sizeof msg) == TBS_STORE_UNAVAILABLE);
        double took = now_s() - t0;
        TB_CHECK(took >= 0.75 && took < 3);
        TB_CHECK(waited == 1);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) return 1;
    return tb_test_done();
}
