#!/usr/bin/env python3
"""Checks the #include lines of the tree against its layering (ARCHITECTURE.md).

- engine/: a file includes headers of its own layer and lower ones only (base, then s3 and
  archive, format, storage and backends, read, write, store), and nothing outside engine/.
- fs/ and cli/ (the two front ends) include nothing of each other.
- No circle: a unit is a header and its .cc (a.h, a.cc); unit A uses unit B when a.h or a.cc
  includes b.h; no unit may reach itself through others.

Circles that predate this check are listed in KNOWN_CIRCLES (by the names of their units, so
that moving a file keeps it known); any other fails, and a known one that is gone is reported so
that the list shrinks. Prints each violation and exits 1 if there is any.
Usage: scripts/check_includes.py [ROOT]
"""
import os
import re
import sys

LAYERS = {
    "base": 0,
    "s3": 1,
    "archive": 1,
    "format": 2,
    "storage": 3,
    "backends": 3,
    "read": 4,
    "write": 5,
    "store": 6,
}
FOLDERS = ("engine", "fs", "cli")
# Unit pairs that use each other through their .cc files; each is to be broken by whoever
# works there next, and then taken off this list.
KNOWN_CIRCLES = [
    {"index_builder", "zip_index"},
    {"storage", "store_moves"},
    {"s3_archive_files", "s3_storage"},
    {"backup", "manifest_cache", "manifest_file"},
    {"snapshot_writer", "writer_plan"},
    {"backup_view", "xattrs"},
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for top in FOLDERS:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".h", ".cc")):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, root)


def layer(path):
    parts = path.split("/")
    return LAYERS.get(parts[1]) if parts[0] == "engine" and len(parts) > 2 else None


def problems(path, included):
    top = path.split("/")[0]
    out = []
    for inc in included:
        inc_top = inc.split("/")[0]
        if top == "engine" and inc_top in ("fs", "cli"):
            out.append(f"{path}: includes {inc} (the engine includes no front end)")
        elif {top, inc_top} == {"fs", "cli"}:
            out.append(f"{path}: includes {inc} (fs/ and cli/ include nothing of each other)")
        elif top == "engine" and inc_top == "engine":
            mine, theirs = layer(path), layer(inc)
            if mine is None or theirs is None:
                out.append(f"{path}: includes {inc} (a folder of no known layer)")
            elif theirs > mine:
                out.append(f"{path}: includes {inc} (a higher layer)")
    return out


def unit(path):
    return path[: -len(".cc")] if path.endswith(".cc") else path[: -len(".h")]


def circles(uses):
    """Strongly connected components of more than one unit (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(uses):
        if start in index:
            continue
        work = [(start, iter(sorted(uses.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(uses.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    out = []
    uses = {}
    for path in sources(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            included = INCLUDE.findall(f.read())
        out += problems(path, included)
        mine = uses.setdefault(unit(path), set())
        for inc in included:
            if inc.endswith(".h") and unit(inc) != unit(path) and inc.split("/")[0] in FOLDERS:
                mine.add(unit(inc))
    known = [frozenset(k) for k in KNOWN_CIRCLES]
    seen = set()
    for component in circles(uses):
        names = frozenset(os.path.basename(u) for u in component)
        if names in known:
            seen.add(names)
        else:
            out.append("circle: " + " -> ".join(component))
    for line in out:
        print(line)
    for gone in set(known) - seen:
        print("known circle gone (take it off KNOWN_CIRCLES): " + ", ".join(sorted(gone)))
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
