/* cmd_list.c - tilebench list: the variants the libraries hold, without a GPU. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "common/op.h"
#include "driver/catalog.h"
#include "common/tb.h"
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: tilebench list [--variants PATH]... [--filter GLOB]... [--exclude GLOB]...\n"
           "                      [--format table|json]\n"
           "\n"
           "List name, family, operations, parameters, file and the file's SHA-256 of every variant.\n"
           "Works without a GPU: the libraries are opened by a probe worker process.\n"
           "\n"
           "  --variants PATH  a variant .so or a directory of them (repeatable;\n"
           "                   default: the shipped variants)\n"
           "  --filter GLOB    keep names matching GLOB (fnmatch; repeatable)\n"
           "  --exclude GLOB   drop names matching GLOB (repeatable)\n"
           "  --format F       table (default) or json\n");
}

int cmd_list(int argc, char **argv, const tb_paths *paths)
{
    static const struct option opts[] = {
        { "variants", required_argument, 0, 'v' }, { "filter", required_argument, 0, 'f' },
        { "exclude", required_argument, 0, 'x' }, { "format", required_argument, 0, 'F' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    char *vp[TB_CLI_MAX_REPEAT], *inc[TB_CLI_MAX_REPEAT], *exc[TB_CLI_MAX_REPEAT];
    size_t nvp = 0, ninc = 0, nexc = 0;
    const char *format = "table";
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'v': if (tb_cli_push(vp, &nvp, TB_CLI_MAX_REPEAT, optarg, "--variants")) return 2; break;
        case 'f': if (tb_cli_push(inc, &ninc, TB_CLI_MAX_REPEAT, optarg, "--filter")) return 2; break;
        case 'x': if (tb_cli_push(exc, &nexc, TB_CLI_MAX_REPEAT, optarg, "--exclude")) return 2; break;
        case 'F': format = optarg; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("list", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'list'", argv[optind]);
    if (strcmp(format, "table") && strcmp(format, "json"))
        return tb_cli_error("unknown format '%s' for list (table, json)", format);
    if (nvp == 0) vp[nvp++] = (char *)paths->variants_dir;
    char msg[TB_MSG_LEN], **files = NULL;
    size_t nfiles = 0;
    int rc = tb_catalog_expand(vp, nvp, &files, &nfiles, msg, sizeof msg);
    if (rc) return tb_cli_error("%s", msg);
    tb_catalog cat;
    rc = tb_catalog_load(&cat, paths->worker, files, nfiles, msg, sizeof msg);
    tb_strv_free(files, nfiles);
    if (rc) return tb_cli_error("%s", msg);
    for (size_t i = 0; i < cat.n_refusals; i++) tb_cli_warn("refused: %s", cat.refusals[i]);
    rc = tb_catalog_select(&cat, inc, ninc, exc, nexc, msg, sizeof msg);
    /* a filter that matches nothing: an empty JSON array and success, as a filter should;
     * the table says so in one line */
    if (rc && !strcmp(format, "json") && cat.n == 0) {
        printf("[]\n");
        tb_catalog_free(&cat);
        return 0;
    }
    if (rc) { tb_catalog_free(&cat); return tb_cli_error("%s", msg); }
    if (!strcmp(format, "json")) {
        cJSON *a = cJSON_CreateArray();
        for (size_t i = 0; i < cat.n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", cat.v[i].name);
            cJSON_AddStringToObject(o, "family", cat.v[i].family);
            cJSON *ops = cJSON_AddArrayToObject(o, "ops");   /* the operations it computes */
            for (size_t k = 0; tb_op_at(k); k++)
                if (tb_op_at(k)->op < 32 && (cat.v[i].ops & (1u << tb_op_at(k)->op)))
                    cJSON_AddItemToArray(ops, cJSON_CreateString(tb_op_at(k)->name));
            cJSON *p = cJSON_Parse(cat.v[i].params_json);
            cJSON_AddItemToObject(o, "params", p ? p : cJSON_CreateObject());
            cJSON_AddStringToObject(o, "sass", cat.v[i].sass);
            cJSON_AddStringToObject(o, "file", cat.v[i].file);
            cJSON_AddStringToObject(o, "sha256", cat.v[i].sha256);
            cJSON_AddItemToArray(a, o);
        }
        char *s = cJSON_Print(a);
        printf("%s\n", s);
        cJSON_free(s);
        cJSON_Delete(a);
    } else {
        int w = 44;
        for (size_t i = 0; i < cat.n; i++)
            if ((int)strlen(cat.v[i].name) > w) w = (int)strlen(cat.v[i].name);
        int ind = w + 23;
        printf("%-*s %-10s %-10s %s\n", w, "name", "family", "sass", "parameters / file / sha256");
        for (size_t i = 0; i < cat.n; i++)
            printf("%-*s %-10s %-10s %s\n%*s%s\n%*s%s\n", w, cat.v[i].name, cat.v[i].family,
                   cat.v[i].sass, cat.v[i].params_json, ind, "", cat.v[i].file, ind, "",
                   cat.v[i].sha256);
        printf("%zu variant%s\n", cat.n, cat.n == 1 ? "" : "s");
    }
    tb_catalog_free(&cat);
    return 0;
}
