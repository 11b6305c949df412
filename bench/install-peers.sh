#!/usr/bin/env bash
# Installs the tools bench/mount_read.sh, bench/backup_tree.sh and the S3 benchmarks
# (bench/s3_*.sh) compare against (Debian 12 packages): restic, borg (with its FUSE binding),
# squashfuse and squashfs-tools, rclone and s3fs, archivemount and unzip (bench/archive_read.sh).
set -euo pipefail
pkgs=(restic borgbackup python3-llfuse squashfuse squashfs-tools rclone s3fs archivemount unzip)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
