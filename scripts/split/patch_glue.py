#!/usr/bin/env python3
"""Teaches wasm-bindgen's glue (PKG/replayground.js) to load the module's rest.

Usage: patch_glue.py PKG NAMES.json (the names the splitter gave the parts' meeting points)

scripts/split cut the module in two: replayground_bg.wasm, the code a first
visit runs, and REST, every other function's body. The primary's moved
functions call a loader (a slot of table 0, named in NAMES.json) the first time
one of them runs; this patch fills that slot when the glue instantiates the
primary. The loader instantiates the rest on the primary's memory, tables and
globals: with the module `init()` started compiling in the background, or
provided by `provideRest()`, or else fetched synchronously (a synchronous
request: the call that needs it waits). The typings and package.json learn
the same. Fails if the glue does not look as expected (another wasm-bindgen).
"""
import json
import os
import sys

REST = "replayground_rest.wasm"

# A module that imports a JS function h.load () -> () and exports it: a
# function a funcref table can hold.
HELPER = [0, 0x61, 0x73, 0x6D, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 2, 10, 1, 1, 0x68, 4, 0x6C, 0x6F,
          0x61, 0x64, 0, 0, 7, 8, 1, 4, 0x6C, 0x6F, 0x61, 0x64, 0, 0]

LOADER = """
// The module's rest (added by scripts/split/patch_glue.py): the functions a
// first visit does not run are in %(rest)s. The primary calls the loader the
// first time one of them runs; the loader instantiates the rest on the
// primary's memory, tables and globals.
const __split_rest_file = '%(rest)s';
let __split_rest_module;
let __split_rest_loading;

function __split_rest_url() {
    return new URL(__split_rest_file, import.meta.url);
}

// Compiles the rest in the background (`init()` starts it in the task after its own).
function loadRest() {
    if (__split_rest_module !== undefined) return Promise.resolve();
    if (__split_rest_loading === undefined) {
        __split_rest_loading = WebAssembly.compileStreaming(fetch(__split_rest_url()))
            .then((module) => { __split_rest_module ??= module; })
            .catch((error) => { __split_rest_loading = undefined; throw error; });
    }
    return __split_rest_loading;
}

// Gives the rest's bytes or compiled module (where nothing can fetch it: Node.js).
function provideRest(module) {
    __split_rest_module = module instanceof WebAssembly.Module ? module : new WebAssembly.Module(module);
}

function __split_fetch_now() {
    if (typeof XMLHttpRequest !== 'function') {
        throw new Error(`replayground: this call needs ${__split_rest_file}; give it to provideRest() first`);
    }
    const request = new XMLHttpRequest();
    request.open('GET', __split_rest_url(), false);
    // A window cannot ask a synchronous request for an ArrayBuffer: the
    // bytes come as text, one character per byte.
    request.overrideMimeType('text/plain; charset=x-user-defined');
    request.send();
    if (request.status !== 200 && request.status !== 0) {
        throw new Error(`replayground: ${__split_rest_file}: HTTP ${request.status}`);
    }
    const text = request.responseText;
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i) & 0xff;
    return new WebAssembly.Module(bytes);
}

function __split_attach(exports) {
    if (exports.%(loaderSlot)s === undefined) return;
    const load = () => {
        try {
            __split_rest_module ??= __split_fetch_now();
            const rest = new WebAssembly.Instance(__split_rest_module, { %(namespace)s: exports });
            // The rest's own shadow stack, Rust's default size (16 pages of
            // 64 KiB) in pages grown for it: the allocator never hands out
            // pages it did not grow itself, and no Rust code runs here.
            const pages = 16;
            rest.exports.%(restStackPointer)s.value = (exports.memory.grow(pages) + pages) * 65536;
        } catch (error) {
            // Thrown through the call under way, which cannot finish: the
            // module is as unusable as after a trap, and says so as a trap does.
            throw new WebAssembly.RuntimeError(error instanceof Error ? error.message : String(error));
        }
        exports.%(loaded)s.value = 1;
        // When a page needed it (the benchmark reads it from a trace).
        globalThis.performance?.mark?.('replayground-rest-instantiated');
    };
    const helper = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(%(helper)s)), { h: { load } });
    exports.%(table)s.set(exports.%(loaderSlot)s.value, helper.exports.load);
}

"""

TYPES = """
/** Compiles the module's rest (%(rest)s) in the background; `init()` starts it. */
export function loadRest(): Promise<void>;
/** Gives the module's rest (%(rest)s) where it cannot be fetched (Node.js, with `initSync`). */
export function provideRest(module: WebAssembly.Module | BufferSource): void;
"""


def replace_once(text, old, new, what):
    if text.count(old) != 1:
        sys.exit(f"patch_glue: {what}: expected once in the glue, found {text.count(old)} times")
    return text.replace(old, new)


def main():
    pkg = sys.argv[1]
    glue_path = os.path.join(pkg, "replayground.js")
    glue = open(glue_path).read()
    names = {**json.load(open(sys.argv[2])), "rest": REST, "helper": json.dumps(HELPER)}
    glue = replace_once(glue, "function __wbg_finalize_init(instance, module) {",
                        LOADER % names + "function __wbg_finalize_init(instance, module) {", "finalize")
    glue = replace_once(glue, "    wasm = instance.exports;\n",
                        "    wasm = instance.exports;\n    __split_attach(wasm);\n", "exports")
    glue = replace_once(glue, "    return __wbg_finalize_init(instance, module);\n}\n\nexport {",
                        "    const exports = __wbg_finalize_init(instance, module);\n"
                        # In a task of its own: the caller's first call, which
                        # follows `await init()`, then has both cores to itself
                        # (the rest's compilation beside it made a first query
                        # 5 ms later).
                        f"    if (exports.{names['loaderSlot']} !== undefined) setTimeout(() => loadRest().catch(() => {{}}), 0);\n"
                        "    return exports;\n}\n\nexport {", "init")
    glue = replace_once(glue, "export { initSync, __wbg_init as default };",
                        "export { initSync, loadRest, provideRest, __wbg_init as default };", "export list")
    open(glue_path, "w").write(glue)

    types_path = os.path.join(pkg, "replayground.d.ts")
    types = open(types_path).read()
    open(types_path, "w").write(types + TYPES % names)

    package_path = os.path.join(pkg, "package.json")
    package = json.load(open(package_path))
    if REST not in package["files"]:
        package["files"].insert(1, REST)
    with open(package_path, "w") as f:
        json.dump(package, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
