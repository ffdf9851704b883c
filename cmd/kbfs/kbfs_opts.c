/*
 * kbfs_opts: the names of kbfs_opts's choices (kbfs_run.h), for the option
 * parser (cmd/kbfs.c) and the JSON record (kbfs_out.c).
 */
#include "kbfs_run.h"

#include <stddef.h>

const char *const kbfs_transport_names[] = {"auto", "mpi", "nccl", "peer", NULL};
const char *const kbfs_pred_format_names[] = {"text", "bin", NULL};
const char *const kbfs_validator_names[] = {"auto", "device", "host", NULL};
const char *const kbfs_roots_from_names[] = {"all", "largest", NULL};
