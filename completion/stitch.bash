# bash completion for stitch and stitchfs (installed as
# /usr/share/bash-completion/completions/stitch, and .../stitchfs as a link to it; or source it).
# Completes commands, options and their values, and local paths: backup folders and archives
# where a backup is named. Nothing is ever looked up in object storage: an s3:// or http(s)
# location is never completed, so no credentials are read and no request is made.

_stitch_commands="backup cat diff flatten info log ls prune restore verify"
_stitch_common="--backups-root --clickhouse-config --disk --help"

# _stitch_flags COMMAND: the options COMMAND takes (stitch COMMAND --help lists the same).
_stitch_flags() {
  case $1 in
    backup) echo "--base --immutable --checksum --jobs --files-cache --timestamp --json" ;;
    cat) echo "--base" ;;
    diff | flatten | info | restore | verify) echo "--base --json" ;;
    log) echo "--json" ;;
    ls) echo "-l -R --base --json" ;;
    prune) echo "--keep-last --keep-daily --keep-monthly --dry-run --json" ;;
  esac
  echo "$_stitch_common"
}

# Options followed by a value (the next word).
_stitch_takes_value() {
  case $1 in
    --base | --immutable | --checksum | --jobs | --timestamp | --keep-last | --keep-daily | \
      --keep-monthly | --backups-root | --clickhouse-config | --disk) return 0 ;;
  esac
  return 1
}

# _stitch_paths KIND CUR: local paths. KIND dir: folders; backup: folders and archives (a
# backup is a folder with a .backup, or an archive ClickHouse wrote); file: anything.
_stitch_paths() {
  local kind=$1 cur=$2 p
  case $cur in
    s3:* | http:* | https:* | *"://"*) return ;;  # Object storage: never completed.
  esac
  local IFS=$'\n'
  compopt -o filenames 2>/dev/null
  if [ "$kind" = file ]; then
    COMPREPLY+=($(compgen -f -- "$cur"))
    return
  fi
  COMPREPLY+=($(compgen -d -- "$cur"))
  if [ "$kind" = backup ]; then
    for p in $(compgen -f -- "$cur"); do
      case $p in
        *.zip | *.zipx | *.tar | *.tar.gz | *.tgz | *.tar.bz2 | *.tar.xz | *.tar.lzma | *.tar.zst | *.tzst)
          [ -f "$p" ] && COMPREPLY+=("$p") ;;
      esac
    done
  fi
}

# Bash splits words at '=' and ':' too (COMP_WORDBREAKS): _stitch_words joins them again into
# _stitch_w, with _stitch_cw the index of the word being completed ("--disk", "a=/x").
_stitch_words() {
  _stitch_w=()
  _stitch_cw=0
  local i w glue=0
  for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
    w=${COMP_WORDS[i]}
    if [ ${#_stitch_w[@]} -gt 0 ] && { [ $glue = 1 ] || [[ $w =~ ^[=:]+$ ]]; }; then
      _stitch_w[-1]+=$w
    else
      _stitch_w+=("$w")
    fi
    if [[ $w =~ ^[=:]+$ ]]; then glue=1; else glue=0; fi
    [ "$i" -eq "$COMP_CWORD" ] && _stitch_cw=$((${#_stitch_w[@]} - 1))
  done
  return 0
}

# _stitch_trim WORD: bash replaces only the text after the last '=' or ':' of the word being
# completed, so candidates made for the whole WORD lose what comes before it.
_stitch_trim() {
  local tail=$1 i
  [[ $COMP_WORDBREAKS == *=* ]] && tail=${tail##*=}
  [[ $COMP_WORDBREAKS == *:* ]] && tail=${tail##*:}
  local drop=$((${#1} - ${#tail}))
  [ "$drop" -gt 0 ] || return 0
  for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]:drop}; done
}

# _stitch_positional COMMAND N: what the Nth argument (from 0) of COMMAND is.
_stitch_positional() {
  case $1:$2 in
    backup:0 | restore:1 | flatten:1) echo dir ;;  # A source folder, a new folder.
    backup:1) echo dir ;;
    log:0 | prune:0) echo dir ;;  # A store: a folder of backups.
    cat:0 | diff:0 | diff:1 | flatten:0 | info:0 | ls:0 | restore:0 | verify:0) echo backup ;;
    *) echo none ;;  # A path inside a backup.
  esac
}

_stitch() {
  COMPREPLY=()
  _stitch_words
  local cur=${_stitch_w[_stitch_cw]} prev=""
  [ "$_stitch_cw" -gt 0 ] && prev=${_stitch_w[_stitch_cw - 1]}
  _stitch_complete "$cur" "$prev"
  _stitch_trim "$cur"
}

# _stitch_complete CUR PREV: the candidates for the whole word CUR.
_stitch_complete() {
  local cur=$1 prev=$2
  if [ "$_stitch_cw" -eq 1 ]; then
    COMPREPLY=($(compgen -W "$_stitch_commands --help --version" -- "$cur"))
    return
  fi
  local cmd=${_stitch_w[1]}
  if [[ $cur == --*=* ]]; then  # --opt=value: as if apart.
    prev=${cur%%=*}
    _stitch_complete "${cur#*=}" "$prev"
    COMPREPLY=("${COMPREPLY[@]/#/$prev=}")
    return
  fi
  case $prev in
    --checksum) COMPREPLY=($(compgen -W "xxh3 clickhouse" -- "$cur")); return ;;
    --base) _stitch_paths backup "$cur"; return ;;
    --backups-root) _stitch_paths dir "$cur"; return ;;
    --clickhouse-config) _stitch_paths file "$cur"; return ;;
    --disk)  # NAME=DIR: the folder after '='.
      if [[ $cur == *=* ]]; then
        _stitch_paths dir "${cur#*=}"
        COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
      fi
      return ;;
  esac
  if _stitch_takes_value "$prev"; then return; fi  # A number, a time, a glob: typed.
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_stitch_flags "$cmd")" -- "$cur"))
    return
  fi
  local i n=0 dashdash=0 w
  for ((i = 2; i < _stitch_cw; i++)); do
    w=${_stitch_w[i]}
    if [ $dashdash = 0 ] && [ "$w" = -- ]; then dashdash=1; continue; fi
    if [ $dashdash = 0 ] && [[ $w == -* ]]; then
      [[ $w != *=* ]] && _stitch_takes_value "$w" && i=$((i + 1))
      continue
    fi
    n=$((n + 1))
  done
  local kind
  kind=$(_stitch_positional "$cmd" "$n")
  [ "$kind" = none ] || _stitch_paths "$kind" "$cur"
}

# stitchfs's mount options (fs/options.cc, stitchfs --help); those with a value end in '='.
_stitchfs_options="noxattr noverify nomanifest spin_us= allow_other default_permissions uid= gid=
umask= base= disk= backups_root= clickhouse_config= s3_endpoint= s3_region= s3_profile=
s3_credentials= s3_cache_mb= readahead_kb= walk_ahead= share_inodes max_backups= cache_mb=
manifest_cache_mb= ro fsname= subtype= auto_unmount nodev nosuid noexec noatime"

_stitchfs() {
  COMPREPLY=()
  _stitch_words
  local cur=${_stitch_w[_stitch_cw]} prev=""
  [ "$_stitch_cw" -gt 0 ] && prev=${_stitch_w[_stitch_cw - 1]}
  _stitchfs_complete "$cur" "$prev"
  _stitch_trim "$cur"
}

_stitchfs_complete() {
  local cur=$1 prev=$2
  if [ "$prev" = -o ]; then
    # A comma-separated list: complete its last option, keeping the ones before it.
    local before="" last=$cur
    if [[ $cur == *,* ]]; then before=${cur%,*},; last=${cur##*,}; fi
    case $last in
      base=* | backups_root=*) _stitch_paths dir "${last#*=}" ;;
      clickhouse_config=* | s3_credentials=*) _stitch_paths file "${last#*=}" ;;
      *=*) return ;;  # A number, a name, an endpoint: typed.
      *)
        COMPREPLY=($(compgen -P "$before" -W "$_stitchfs_options" -- "$last"))
        compopt -o nospace 2>/dev/null
        return ;;
    esac
    COMPREPLY=("${COMPREPLY[@]/#/$before${last%%=*}=}")
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "-f -d -s -o -h --help -V --version" -- "$cur"))
    return
  fi
  local i n=0
  for ((i = 1; i < _stitch_cw; i++)); do
    case ${_stitch_w[i]} in
      -o) i=$((i + 1)) ;;
      -*) ;;
      *) n=$((n + 1)) ;;
    esac
  done
  case $n in
    0) _stitch_paths backup "$cur" ;;  # A backup or a store.
    1) _stitch_paths dir "$cur" ;;     # The mount point.
  esac
}

complete -F _stitch stitch
complete -F _stitchfs stitchfs
