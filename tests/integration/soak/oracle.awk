# The soak test's oracle: replays the events file (see common.sh) and says what a store mount
# should have shown for one name over an interval [ta, tb] (microseconds).
#   kind=name key=NAME      the backup folder NAME
#   kind=uuid key=UUID      by-uuid/UUID
#   kind=latest             latest
#   kind=at key=PREFIX      at/PREFIX: the newest backup whose timestamp is not after the end of
#                           the period PREFIX names (YYYY, YYYY-MM, ..., YYYY-MM-DDThh:mm:ss)
# (Times are printed with %.0f: mawk's %d stops at 2^31.)
# Changes that ended before ta are applied; then each change overlapping [ta, tb] is applied in
# turn, and the answer is looked up before and after each; then the same again with those
# changes in the reverse order, since changes that overlap may land in any order (a prune
# removes a chain's children before their bases, so at/ may meet the base for a moment).
# Output:
#   stable NAME UUID TS   one answer throughout, and that backup untouched (flattening in place
#                         does not count: it must be invisible)
#   absent                no such backup throughout
#   unstable              the answer changed, or the backup changed, during the interval
# A replacement made by two renames ("gap" on its events) has a moment without its name, whose
# answer is seen too. Then a "cand NAME UUID TS" line for each answer seen (every generation a reader may have seen;
# "cand - - -" if there was a moment without one),
# a "change" line for each change overlapping the interval, and "lastflat NAME US" with the end
# of the last in-place flattening of each answer before tb (for the failure messages).
$2 == "B" {
  n++; id[n] = $3; idx[$3] = n; op[n] = $4; nm[n] = $5; uu[n] = $6; ts[n] = $7
  b[n] = $1 + 0; e[n] = 1e18; gap[n] = $8 == "gap"
}
$2 == "E" {
  k = idx[$3]
  if (k) { e[k] = $1 + 0; op[k] = $4; uu[k] = $6; ts[k] = $7; gap[k] = gap[k] || $8 == "gap" }
}
function apply(k) {
  if (op[k] == "add" || op[k] == "repl") { su[nm[k]] = uu[k]; st[nm[k]] = ts[k] }
  else if (op[k] == "del" || op[k] == "fail") { delete su[nm[k]]; delete st[nm[k]] }
}
function resolve(   x, best) {
  if (kind == "name") return (key in su) ? key " " su[key] " " st[key] : "- - -"
  if (kind == "uuid") {
    for (x in su) if (su[x] == key) return x " " su[x] " " st[x]
    return "- - -"
  }
  best = ""
  for (x in su) {
    if (kind == "at" && substr(st[x], 1, length(key)) > key) continue
    if (best == "" || st[x] > st[best]) best = x
  }
  return best == "" ? "- - -" : best " " su[best] " " st[best]
}
function see(   r) {
  r = resolve()
  if (!(r in seen)) { seen[r] = 1; nseen++ }
}
# Applies the overlapping changes ov[from..to] (step `dir`), looking the answer up after each.
function replay(from, to, dir,   i, k) {
  for (i = from; dir > 0 ? i <= to : i >= to; i += dir) {
    k = ov[i]
    if (gap[k]) {  # A replacement by two renames: a moment without the name first.
      delete su[nm[k]]; delete st[nm[k]]
      see()
    }
    apply(k)
    see()
  }
}
END {
  for (k = 1; k <= n; k++) if (e[k] < ta) apply(k)
  for (x in su) { su0[x] = su[x]; st0[x] = st[x] }
  first = resolve(); seen[first] = 1; nseen = 1
  for (k = 1; k <= n; k++) {
    if (e[k] < ta || b[k] > tb) continue
    changes = changes sprintf("change %s %s %s %.0f %.0f\n", id[k], op[k], nm[k], b[k], e[k])
    if (op[k] == "flat") continue
    touched[nm[k]] = 1
    ov[++m] = k
  }
  replay(1, m, 1)
  for (x in su) { delete su[x]; delete st[x] }
  for (x in su0) { su[x] = su0[x]; st[x] = st0[x] }
  replay(m, 1, -1)
  split(first, f, " ")
  if (nseen == 1 && f[1] == "-") print "absent"
  else if (nseen == 1 && !(f[1] in touched)) print "stable", first
  else print "unstable"
  for (r in seen) {
    print "cand", r
    split(r, f, " "); want[f[1]] = 1
  }
  printf "%s", changes
  for (k = 1; k <= n; k++) if (op[k] == "flat" && e[k] <= tb && (nm[k] in want)) last[nm[k]] = e[k]
  for (x in last) printf "lastflat %s %.0f\n", x, last[x]
}
