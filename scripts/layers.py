#!/usr/bin/env python3
"""Checks that the crate's files obey its layers, and that its import graph
has no circle.

LAYERS below is the order the crate stands in, bottom first: each folder or
file of src/ is in one layer, and a file imports only from its own layer or
those below it, whatever the path says (`super::`, `crate::`, a `pub use`
that hands a name on from elsewhere: the name is followed to where it is
declared). docs/src/contributing.md draws the same order; the script checks
that its picture lists these layers, in this order, with these paths.

Files of src/ are the nodes; an edge A -> B says that A's code names a
module path that lives in B (`use crate::sim::search::Explorer`,
`super::walk::Stats`, `crate::format::parse(...)` inline). What does not
count: a `pub use` (a module's face hands names on, it does not depend on
them), a `mod` declaration, comments and doc links, and the test modules
(`#[cfg(test)] mod tests`). A circle is printed with the names that tie it,
and the script exits 1; otherwise it prints the layers, the bottom first.
A circle listed in KNOWN is reported and allowed until it is gone (then the
script asks for its line to be removed): the list only shrinks. It is empty.

Usage: python3 scripts/layers.py [--quiet] [--src DIR]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
if "--src" in sys.argv:
    SRC = pathlib.Path(sys.argv[sys.argv.index("--src") + 1]).resolve()
CONTRIBUTING = ROOT / "docs" / "src" / "contributing.md"

# The crate's layers, bottom first: (name, the paths of src/ in it). A path
# is a folder (ending in /) or a file; a file is in the layer of the longest
# path that holds it. The one upward import allowed is to the error type.
LAYERS = [
    ("ground", ["params.rs", "error.rs", "json.rs", "reintroduced.rs"]),
    ("storage", ["storage/"]),
    ("seam", ["engines/"]),
    ("engine", ["sim/"]),
    ("search", ["sim/search/"]),
    ("format", ["format/"]),
    ("catalog", ["scenarios/"]),
    ("patterns", ["patterns/"]),
    ("fuzz", ["fuzz/"]),
    ("inputs, outputs", ["input.rs", "export/", "bench.rs"]),
    ("front ends", ["wasm/", "lib.rs", "main.rs", "cli/"]),
]
ANYWHERE = {("error",)}

# Circles known and left, each with the step that removes it (none now: a
# circle found is a mistake to mend, or one to list here with its reason).
KNOWN = set()


# The binary is a crate of its own: src/main.rs and the modules it declares
# (src/cli/) stand under this root, apart from the library's (src/lib.rs);
# their `crate::` paths are the binary's, their `replayground::` paths the
# library's.
BIN = "<bin>"
BIN_MODULES = set(re.findall(r"^\s*(?:pub\s+)?mod\s+(\w+)\s*;", (SRC / "main.rs").read_text(), re.M))


def module_of(path):
    """The module path of a source file: src/sim/search/mod.rs -> ('sim', 'search');
    src/main.rs -> ('<bin>',), src/cli/run.rs -> ('<bin>', 'cli', 'run')."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    binary = parts[0] == "main" or parts[0] in BIN_MODULES
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return ((BIN,) if binary else ()) + tuple(parts)


def strip(text):
    """The code without comments, string literals' contents, and test modules."""
    text = re.sub(r"#\[cfg\((?:all\()?test[^\]]*\]\s*mod tests \{.*", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    # A visibility names a module, it does not use it.
    text = re.sub(r"pub\(in [^)]*\)", "pub", text)
    return text


def use_trees(text):
    """Each `use` statement's paths, flattened (`a::{b, c::d}` -> a::b, a::c::d);
    `pub use` statements left out."""
    paths = []
    for m in re.finditer(r"(^|[;{}\s])(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", text):
        if m.group(2):
            continue
        paths.extend(expand(re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", m.group(3)))))
    return paths


def expand(tree):
    """`a::{b,c::{d,e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    brace = tree.find("{")
    if brace < 0:
        return [tree]
    prefix, inner = tree[:brace], tree[brace + 1 : tree.rfind("}")]
    items, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    out = []
    for item in filter(None, items):
        out.extend(prefix + p for p in expand(item))
    return out


def inline_modules(text):
    """The inline modules of a file's code (`pub mod catalog { ... }`): a list
    of (start, end, name path), nested ones with their parents' names."""
    found = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        found.append((m.start(), i, m.group(1)))
    out = []
    for start, end, name in found:
        outer = [n for s2, e2, n in found if s2 < start and end <= e2]
        out.append((start, end, tuple(outer) + (name,)))
    return out


def picture_problems():
    """How the contributing chapter's picture of the layers differs from
    LAYERS: it lists them top first, one line each, the name then its paths
    (`src/…`); a line that starts with spaces continues the one above."""
    if not CONTRIBUTING.exists() or "--src" in sys.argv:
        return []
    text = CONTRIBUTING.read_text()
    block = re.search(r"## Layout.*?```\n(.*?)```", text, re.S)
    if not block:
        return [f"{CONTRIBUTING.name}: no picture of the layers under '## Layout'"]
    drawn = []
    for line in block.group(1).splitlines():
        if not line.strip() or line.startswith(" "):
            continue
        label = re.split(r"\s{2,}", line.strip())[0]
        paths = re.findall(r"src/([\w/]+(?:\.rs|/))", line)
        drawn.append((label, paths))
    wanted = [(label, list(paths)) for label, paths in reversed(LAYERS)]
    problems = []
    for i in range(max(len(drawn), len(wanted))):
        got = drawn[i] if i < len(drawn) else None
        want = wanted[i] if i < len(wanted) else None
        if got is None or want is None or got[0] != want[0] or sorted(got[1]) != sorted(want[1]):
            problems.append(f"{CONTRIBUTING.name}: line {i + 1} of the picture is {got}, LAYERS says {want}")
    return problems


def main():
    files = {module_of(p): p for p in sorted(SRC.rglob("*.rs"))}
    modules = set(files)
    children_of = {
        module: {m[-1] for m in modules if m[:-1] == module and len(m) == len(module) + 1}
        for module in modules
    }
    # What each module's face hands on: (module, inline module path) ->
    # {name: the path it stands for, as written there}; "*" for a glob.
    handed_by = {}
    uses = {}
    for module, path in files.items():
        text = strip(path.read_text())
        paths = use_trees(text)
        inline = inline_modules(text)
        handed = []
        for m in re.finditer(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
            within = max((n for s2, e2, n in inline if s2 < m.start() < e2), key=len, default=())
            # `a::b as c` hands b on as c: written `a::b@c` once spaces go.
            for q in expand(re.sub(r"\s+", "", re.sub(r"\s+as\s+(\w+)", r"@\1", m.group(1)))):
                q, _, alias = q.partition("@")
                name = alias or q.split("::")[-1]
                handed_by.setdefault((module, within), {})[name] = q[: -len("::*")] if name == "*" else q
                handed.append(q)
        # What a module's face hands on is not what its code uses, unless
        # its code uses it too.
        text = re.sub(r"pub(?:\([^)]*\))?\s+use\s+[^;]+;", "", text)
        # A `mod` declaration names a module; it does not use what it hands on.
        text = re.sub(r"(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;", "", text)
        paths += [q for q in handed if q.split("::")[-1] != "*" and re.search(r"\b" + re.escape(q.split("::")[-1]) + r"\b", text)]
        paths += re.findall(r"\b(?:crate|super|self|replayground)(?:::\w+)+", text)
        # In a folder's module, a path may start with a child module's name.
        children = children_of[module]
        paths += [p for p in re.findall(r"\b\w+(?:::\w+)+", text) if p.split("::")[0] in children]
        uses[module] = paths

    def resolve(here, p, depth=0):
        """The module path `p`, written in module `here`, names, a name handed
        on by a `pub use` followed to where it is declared; None if it names
        none of the crate's."""
        parts = p.split("::")
        if parts[0] == "crate":
            base, rest = here[:1] if here[:1] == (BIN,) else (), parts[1:]
        elif parts[0] == "replayground":
            base, rest = (), parts[1:]
        elif parts[0] == "super":
            base = here
            while parts and parts[0] == "super":
                base, parts = base[:-1], parts[1:]
            rest = parts
        elif parts[0] == "self":
            base, rest = here, parts[1:]
        elif parts[0] in children_of.get(here, ()):
            base, rest = here, parts
        else:
            return None
        target = base + tuple(rest)
        while target not in modules and target:
            target = target[:-1]
        if target not in modules:
            return None
        left = (base + tuple(rest))[len(target):]
        if depth < 16:
            for k in range(len(left)):
                faces = handed_by.get((target, left[:k]), {})
                origin = faces.get(left[k])
                rest_after = left[k + 1 :]
                if origin is None and "*" in faces:
                    origin, rest_after = faces["*"], left[k:]
                if origin is not None:
                    followed = resolve(target, "::".join([origin, *rest_after]), depth + 1)
                    if followed is not None:
                        return followed
        return target

    edges = {}
    for module, paths in uses.items():
        for p in paths:
            target = resolve(module, p)
            # A crate's root is its face (re-exports, the crate's map): not a layer.
            if target is not None and target != module and target not in ((), (BIN,)):
                edges.setdefault(module, {}).setdefault(target, set()).add(p)
    name = lambda m: str(files[m].relative_to(SRC.parent))
    # The layers: each file's, by the longest path of LAYERS that holds it.
    def layer_of(module):
        rel = str(files[module].relative_to(SRC))
        held = [(len(path), i) for i, (_, paths) in enumerate(LAYERS) for path in paths
                if rel == path or (path.endswith("/") and rel.startswith(path))]
        return max(held)[1] if held else None
    layer = {m: layer_of(m) for m in files}
    unplaced = sorted(name(m) for m in files if layer[m] is None)
    upward = [
        (a, b, via)
        for a, targets in edges.items()
        for b, via in targets.items()
        if layer[a] is not None and layer[b] is not None and layer[b] > layer[a] and b not in ANYWHERE
    ]
    picture = picture_problems()
    if unplaced or upward or picture:
        for f in unplaced:
            print(f"{f} is in no layer: give it one in LAYERS ({sys.argv[0]})")
        for a, b, via in sorted(upward, key=lambda e: (name(e[0]), name(e[1]))):
            print(f"upward import: {name(a)} ({LAYERS[layer[a]][0]}) -> {name(b)} ({LAYERS[layer[b]][0]}): {', '.join(sorted(via)[:4])}")
        for problem in picture:
            print(problem)
        print(f"layers: {len(upward)} upward imports, {len(unplaced)} files in no layer, {len(picture)} differences from the contributing chapter's picture")
        return 1
    # Circles: strongly connected components of more than one file.
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            sccs.append(component)

    sys.setrecursionlimit(10000)
    for v in sorted(files):
        if v not in index:
            visit(v)
    circles = [c for c in sccs if len(c) > 1]
    known = [c for c in circles if frozenset(map(name, c)) in KNOWN]
    circles = [c for c in circles if frozenset(map(name, c)) not in KNOWN]
    for c in known:
        print(f"known circle, left: {', '.join(sorted(map(name, c)))}")
    gone = KNOWN - {frozenset(map(name, c)) for c in known}
    for c in gone:
        print(f"the known circle of {', '.join(sorted(c))} is gone: remove it from KNOWN in {sys.argv[0]}")
    if circles or gone:
        for c in circles:
            print(f"circle of {len(c)} files:")
            for a in sorted(c):
                for b, via in sorted(edges.get(a, {}).items()):
                    if b in c:
                        print(f"  {name(a)} -> {name(b)}: {', '.join(sorted(via)[:4])}")
        return 1
    # Within a known circle, the files stand on one layer.
    for c in known:
        for v in c:
            edges[v] = {w: via for w, via in edges.get(v, {}).items() if w not in c or w == v}
    if "--quiet" not in sys.argv:
        # Tarjan's components come out bottom first: a layer is a file's
        # longest chain of imports below it.
        depth = {}
        for component in sccs:
            for v in component:
                depth[v] = 1 + max((depth.get(w, 0) for w in edges.get(v, {})), default=0)
        for layer in range(1, max(depth.values()) + 1):
            print(f"layer {layer}: " + ", ".join(sorted(name(m) for m in depth if depth[m] == layer)))
    print(f"layers: {len(files)} files, {sum(len(t) for t in edges.values())} imports, no circle" + (f" but {len(known)} known" if known else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
