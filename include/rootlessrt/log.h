/* log.h: the runtime's log: stderr and --log FILE, text or json lines. */
#ifndef ROOTLESSRT_LOG_H
#define ROOTLESSRT_LOG_H

#include <stdbool.h>

#include "rootlessrt/error.h"

enum rrt_log_level { RRT_LOG_ERROR, RRT_LOG_WARNING, RRT_LOG_INFO, RRT_LOG_DEBUG };

/* Configured once by main(): file may be NULL (stderr only); with a file, only
 * errors also go to stderr (as runc). json selects
 * {"level":..,"msg":..,"time":..} lines as conmon/podman parse them. A symlink at file is
 * followed only when it is the caller's or root's. */
int rrt_log_init(const char *file, bool json, bool debug, struct rrt_error *err);
/* The same with the log file already open (the network helper inherits it). */
void rrt_log_init_fd(int fd, bool json, bool debug);
void rrt_log(enum rrt_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* To the --log file only, never stderr, even without --log: for what runc and crun do not print
 * (at create, an engine reads the runtime's stderr as the container's). */
void rrt_log_file(enum rrt_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define rrt_warn(...) rrt_log(RRT_LOG_WARNING, __VA_ARGS__)
#define rrt_info(...) rrt_log(RRT_LOG_INFO, __VA_ARGS__)
#define rrt_debug(...) rrt_log(RRT_LOG_DEBUG, __VA_ARGS__)
bool rrt_log_debug_enabled(void);
/* --debug: where the time goes. One debug line "T ms (+D): WHAT", T since rrt_phase_start (main
 * calls it first thing) on CLOCK_MONOTONIC, D since this process's previous phase. */
void rrt_phase_start(void);
/* Before an execve of ourselves (the sealed copy): the origin goes along. */
void rrt_phase_export(void);
void rrt_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool rrt_log_json(void);
/* The log file's fd (O_APPEND, O_CLOEXEC) or -1: hooks' output goes there. */
int rrt_log_fd(void);

#endif
