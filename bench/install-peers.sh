#!/usr/bin/env bash
# Installs the tools bench/mount_read.sh and bench/backup_tree.sh compare against (Debian 12
# packages): restic, borg (with its FUSE binding), squashfuse and squashfs-tools.
set -euo pipefail
pkgs=(restic borgbackup python3-llfuse squashfuse squashfs-tools)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
