#!/usr/bin/env python3
"""The include rules of ARCHITECTURE.md, checked: every #include "..." of the project's own
headers in engine/, fs/ and cli/ goes to a folder its own folder may use (the layers, lowest
first, and the backends' rooms), and no two files include each other's headers in a circle
(a file pair x.h/x.cc is one node). Prints each violation and exits 1 if there is any.
Usage: scripts/check_layers.py [ROOT]"""
import os
import re
import sys

CORE = ["engine/base", "engine/location", "engine/format", "engine/storage"]
ROOMS = ["engine/backends/local", "engine/backends/s3", "engine/backends/archive",
         "engine/backends/mem", "engine/backends/fault"]
ENGINE = CORE + ROOMS + ["engine/backends", "engine/read", "engine/write", "engine/store"]

# Folder -> the folders its files may include (its own always).
ALLOWED = {
    "engine/base": [],
    "engine/location": CORE[:1],
    "engine/format": CORE[:2],
    "engine/storage": CORE[:3],
    "engine/backends/local": CORE,
    "engine/backends/archive": CORE,
    # Archives kept in object storage are read through the archive room.
    "engine/backends/s3": CORE + ["engine/backends/archive"],
    "engine/backends/mem": CORE,
    "engine/backends/fault": CORE,
    # The router: the one place that knows every room.
    "engine/backends": CORE + ["engine/backends/local", "engine/backends/s3",
                               "engine/backends/archive"],
    "engine/read": CORE,
    "engine/write": CORE + ["engine/read"],
    "engine/store": CORE + ["engine/read", "engine/write"],
    # The entry points build the storage (the router) and use everything of the engine.
    "fs": ENGINE,
    "cli": ENGINE,
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(root):
    for top in ("engine", "fs", "cli"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".h", ".cc")):
                    path = os.path.relpath(os.path.join(folder, name), root)
                    yield path.replace(os.sep, "/")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    bad = []
    edges = {}
    for path in sources(root):
        folder = os.path.dirname(path)
        if folder not in ALLOWED:
            bad.append(f"{path}: folder {folder} has no rule in scripts/check_layers.py")
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        node = os.path.splitext(path)[0]
        for inc in INCLUDE.findall(text):
            target = os.path.dirname(inc)
            if not inc.startswith(("engine/", "fs/", "cli/")):
                continue
            if target != folder and target not in ALLOWED[folder]:
                bad.append(f"{path}: includes {inc} ({folder} may not use {target})")
            other = os.path.splitext(inc)[0]
            if other != node:
                edges.setdefault(node, set()).add(other)
    bad += cycles(edges)
    for line in bad:
        print(line)
    if bad:
        print(f"check_layers: {len(bad)} violation(s)")
        return 1
    print(f"check_layers: {sum(len(v) for v in edges.values())} includes follow the layers, no circle")
    return 0


def cycles(edges):
    """Each circle of the include graph once, as 'a -> b -> a'."""
    found, state = [], {}
    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                loop = stack[stack.index(nxt):] + [nxt]
                found.append("include circle: " + " -> ".join(loop))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2
    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    return found


if __name__ == "__main__":
    sys.exit(main())
