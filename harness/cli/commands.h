/* commands.h - the subcommands' entry points, one cmd_*.c each; main.c dispatches argv[1] to
 * them. Each parses its own options, prints, and returns the process's exit code (cli.h). */
#ifndef TB_COMMANDS_H
#define TB_COMMANDS_H
#include "driver/paths.h"

int cmd_list(int argc, char **argv, const tb_paths *paths);
int cmd_sweep(int argc, char **argv, const tb_paths *paths);
int cmd_show(int argc, char **argv, const tb_paths *paths);
int cmd_export(int argc, char **argv, const tb_paths *paths);
int cmd_doctor(int argc, char **argv, const tb_paths *paths);
int cmd_gate(int argc, char **argv, const tb_paths *paths);
int cmd_compare(int argc, char **argv, const tb_paths *paths);
int cmd_baseline(int argc, char **argv, const tb_paths *paths);
int cmd_migrate(int argc, char **argv, const tb_paths *paths);
int cmd_merge(int argc, char **argv, const tb_paths *paths);
int cmd_search(int argc, char **argv, const tb_paths *paths);
int cmd_check(int argc, char **argv, const tb_paths *paths);
int cmd_submit(int argc, char **argv, const tb_paths *paths);
int cmd_report(int argc, char **argv, const tb_paths *paths);
#endif
