/* parse_submission.c - a test helper: reads a submission document (a file, or - for stdin) with
 * harness/format/submission_parse.c and prints "ok N results" or the parser's one-line error;
 * with --plausible first, also the leaderboard's plausibility check (tb_submission_plausible:
 * no rate above the peak of its operand types at its clock), as a server runs it.
 * Exit 0 parsed (and plausible), 1 refused, 2 unreadable. Used by tests/submission_cli.sh. */
#include "format/submission_parse.h"
#include "common/tb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int plausible = argc == 3 && strcmp(argv[1], "--plausible") == 0;
    if (argc != 2 + plausible) { fprintf(stderr, "usage: parse_submission [--plausible] FILE|-\n"); return 2; }
    const char *path = argv[1 + plausible];
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) { perror(path); return 2; }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) { char *nb = realloc(b, cap *= 2); if (!nb) { free(b); b = NULL; } else b = nb; }
    }
    if (f != stdin) fclose(f);
    if (!b) return 2;
    tb_submission s;
    char msg[TB_MSG_LEN];
    int rc = tb_submission_parse(b, n, &s, msg, sizeof msg);
    free(b);
    if (rc) { printf("refused: %s\n", msg); return 1; }
    if (plausible && tb_submission_plausible(&s, 0, msg, sizeof msg) != 0) {
        printf("refused: %s\n", msg);
        tb_submission_free(&s);
        return 1;
    }
    printf("ok %zu results\n", s.n);
    tb_submission_free(&s);
    return 0;
}
