#!/usr/bin/env bash
# Runs every benchmark with its default (issue-sized) parameters; one JSON line each.
set -euo pipefail
cd "$(dirname "$0")"
bash open_manifest.sh
bash cat_stitched.sh
bash restore_tree.sh
bash backup_tree.sh
bash mount_read.sh
bash mount_tree.sh
bash store_year.sh
bash store_memory.sh
bash open_depth.sh
bash deep_chain.sh
bash s3_read.sh
bash s3_tree.sh
bash s3_backup.sh
bash archive_read.sh
