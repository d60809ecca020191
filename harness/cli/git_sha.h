/* git_sha.h - the commit the tilebench binary was built from: tb_git_sha[] is defined in a file
 * CMake writes at every build (cmake/tb_git_sha.cmake), 12 hex digits and "+dirty" when the
 * tracked files differed from it, "" outside a git checkout. Stored with every run. */
#ifndef TB_CLI_GIT_SHA_H
#define TB_CLI_GIT_SHA_H

extern const char tb_git_sha[];

#endif
