#!/usr/bin/env python3
"""Where a wasm module's bytes go: code bytes per component (by function name).

Usage: wasm_sizes.py MODULE.wasm  -> JSON on stdout.

Reads the module rustc and clang linked, before wasm-bindgen and wasm-opt
(the final module keeps no names). Each function body is counted under the
crate or library its name comes from: SQLite's C functions have plain names,
Rust's are mangled paths (`_ZN4toml2de...` is toml). Generic code is counted
under the crate that defines it (`core::ptr::drop_in_place<toml::Value>` is
core). The shares are of code before wasm-opt, so they approximate the
shares of the final module.
"""
import json
import re
import sys


def leb(data, i):
    result = shift = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, i


def sections(data):
    i = 8
    while i < len(data):
        kind = data[i]
        size, j = leb(data, i + 1)
        yield kind, data[j:j + size]
        i = j + size


def parse(data):
    imported = 0
    bodies = []
    names = {}
    segments = []
    for kind, body in sections(data):
        if kind == 2:  # imports: imported functions take the first indices
            count, i = leb(body, 0)
            for _ in range(count):
                for _ in range(2):
                    n, i = leb(body, i)
                    i += n
                desc = body[i]
                i += 1
                if desc == 0:
                    imported += 1
                    _, i = leb(body, i)
                elif desc == 1:
                    i += 1
                    flags, i = leb(body, i)
                    _, i = leb(body, i)
                    if flags & 1:
                        _, i = leb(body, i)
                elif desc == 2:
                    flags, i = leb(body, i)
                    _, i = leb(body, i)
                    if flags & 1:
                        _, i = leb(body, i)
                elif desc == 3:
                    i += 2
                else:
                    _, i = leb(body, i)
        elif kind == 10:  # code
            count, i = leb(body, 0)
            for _ in range(count):
                size, j = leb(body, i)
                bodies.append(j + size - i)
                i = j + size
        elif kind == 11:  # data
            segments.append(len(body))
        elif kind == 0:
            n, i = leb(body, 0)
            if body[i:i + n] != b"name":
                continue
            i += n
            while i < len(body):
                sub = body[i]
                size, j = leb(body, i + 1)
                if sub == 1:
                    count, k = leb(body, j)
                    for _ in range(count):
                        index, k = leb(body, k)
                        length, k = leb(body, k)
                        names[index] = body[k:k + length].decode("utf-8", "replace")
                        k += length
                i = j + size
    return imported, bodies, names, sum(segments)


def crate_of(name):
    """The crate (or "SQLite and C") a function name belongs to."""
    if name.startswith("_ZN"):
        m = re.match(r"_ZN(\d+)", name)
        first = name[len(m.group(0)):len(m.group(0)) + int(m.group(1))] if m else "?"
        if first.startswith("_$LT$"):
            inner = re.match(r"_\$LT\$([A-Za-z0-9_]+)", first)
            first = inner.group(1) if inner else first
        return re.sub(r"\[.*", "", first)
    if name.startswith("_R"):
        m = re.search(r"C(?:s[0-9a-zA-Z_]*_)?(\d+)([A-Za-z_][A-Za-z0-9_]*)", name)
        return m.group(2)[: int(m.group(1))] if m else "?"
    if "::" in name:
        return re.sub(r"^<", "", name).split("::")[0].split("[")[0]
    return "SQLite and C"


GROUPS = {
    "SQLite and C": "SQLite (C)",
    "replayground": "replayground (the engine, the format, the exports)",
    "toml": "toml (the scenario format's parser)",
    "toml_parser": "toml (the scenario format's parser)",
    "toml_datetime": "toml (the scenario format's parser)",
    "serde_spanned": "toml (the scenario format's parser)",
    "winnow": "toml (the scenario format's parser)",
    "serde_json": "serde_json",
    "serde": "serde (derives' support)",
    "serde_core": "serde (derives' support)",
    "serde_wasm_bindgen": "serde-wasm-bindgen",
    "core": "core, alloc, std (formatting, collections, generic code)",
    "alloc": "core, alloc, std (formatting, collections, generic code)",
    "std": "core, alloc, std (formatting, collections, generic code)",
    "hashbrown": "core, alloc, std (formatting, collections, generic code)",
    "indexmap": "indexmap",
    "dlmalloc": "dlmalloc (the allocator)",
    "wasm_bindgen": "wasm-bindgen, js-sys, web-sys",
    "js_sys": "wasm-bindgen, js-sys, web-sys",
    "web_sys": "wasm-bindgen, js-sys, web-sys",
    "rusqlite": "rusqlite, rsqlite-vfs, sqlite-wasm-rs",
    "rsqlite_vfs": "rusqlite, rsqlite-vfs, sqlite-wasm-rs",
    "sqlite_wasm_rs": "rusqlite, rsqlite-vfs, sqlite-wasm-rs",
    "libsqlite3_sys": "rusqlite, rsqlite-vfs, sqlite-wasm-rs",
}


def main():
    data = open(sys.argv[1], "rb").read()
    imported, bodies, names, data_bytes = parse(data)
    groups = {}
    for i, size in enumerate(bodies):
        name = names.get(imported + i, "")
        group = GROUPS.get(crate_of(name), "other crates")
        groups[group] = groups.get(group, 0) + size
    code = sum(bodies)
    rows = sorted(groups.items(), key=lambda kv: -kv[1])
    print(json.dumps({
        "codeBytes": code,
        "dataBytes": data_bytes,
        "groups": [{"name": n, "bytes": b, "share": b / code} for n, b in rows],
    }, indent=2))


if __name__ == "__main__":
    main()
