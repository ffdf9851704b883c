/*
 * kprov: where a result comes from, for --version and the JSON record: the
 * commit kbfs was built from, the CPU model and the time (the MPI library's
 * version is kcomm_library_version).
 */
#ifndef KPROV_H
#define KPROV_H

#include <stddef.h>

/* The git commit of the build ("0123456789ab", with "-dirty" when tracked
 * files had changes), or "unknown" when built outside a git checkout. */
const char *kprov_commit(void);
/* The CPU model of this host (/proc/cpuinfo: "model name", or the
 * processor's "Model"/"CPU part" line), or "unknown". */
void kprov_cpu_model(char *buf, size_t len);
/* s as one line of text for a provenance value (an edge file's "key=value"
 * lines, a manifest's "key = value"): a backslash becomes \\, a newline \n,
 * a carriage return \r and any other control character \xNN, so a file
 * name cannot add a line (a key) of its own.  Into out (cap bytes, cut
 * short at an escape's boundary); returns out. */
char *kprov_escape(const char *s, char *out, size_t cap);
/* The time now, UTC, ISO 8601 ("2026-11-24T06:30:00Z"). */
void kprov_utc_now(char *buf, size_t len);

/*
 * The time kgen took to make an edge file travels with the file as its
 * extended attribute user.kbfs.generation_time ("%.6f" seconds), not in its
 * bytes, so the same graph is still the same file (cmp, checksums) whatever
 * the machine, ranks and threads.  kpart copies it into the partition's
 * build-info, where kbfs finds it.  It is lost where attributes are not kept
 * (cp without --preserve=xattr, a pipe, a file system without user
 * attributes); kbfs then says what it reports instead.
 */
#define KPROV_GEN_XATTR "user.kbfs.generation_time"
/* Record seconds on path ("-": standard output, when it is a file); 0, or
 * -1 when the file system cannot (nothing is printed). */
int kprov_set_generation_time(const char *path, double seconds);
/* The recorded time of path ("-": standard input): 0, or -1 when none. */
int kprov_get_generation_time(const char *path, double *seconds);

#endif
