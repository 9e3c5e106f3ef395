#!/usr/bin/env python3
"""The names (without rustc's hash) of a module's functions, given by index.

Usage: names.py WHOLE.wasm INDICES.json -> one name per line, sorted: the
list scripts/split keeps in the primary (first-visit.txt).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from wasm_sizes import parse  # noqa: E402


def main():
    imported, bodies, names, _ = parse(open(sys.argv[1], "rb").read())
    indices = json.load(open(sys.argv[2]))
    out = set()
    for i in indices:
        if not imported <= i < imported + len(bodies):
            sys.exit(f"names: function {i} is not one of the module's")
        if i in names:  # a function without a name stays in the primary anyway
            out.add(re.sub(r"::h[0-9a-f]{16}$", "", names[i]))
    sys.stdout.write("".join(f"{n}\n" for n in sorted(out)))


if __name__ == "__main__":
    main()
