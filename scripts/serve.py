#!/usr/bin/env python3
"""Serves www/ on 127.0.0.1 with the headers the page needs.

- `application/wasm` for .wasm, so `WebAssembly.instantiateStreaming` works;
- a Content-Security-Policy that allows only the page's own scripts and wasm
  compilation (the page repeats it in a <meta> tag for static hosts), on the
  project's own pages and every script, module and stylesheet; an HTML page
  of someone else's put beside them (a page that embeds a scenario) gets
  EMBEDDING_CSP instead, what an embed needs, and its own inline scripts and
  styles are allowed;
- cross-origin isolation (COOP and COEP) for the project's own pages, so
  that they may share memory with their workers: the engine's interrupt flag
  (www/js/engine.js, settle) and the benchmark's fine timer need it. Every
  other response carries COEP too (a worker of an isolated page must, and an
  embed framed by an isolated page); a host page is not isolated (its own
  resources are its business), and its engine restarts instead of
  interrupting;
- no caching, so a rebuilt package is picked up on reload.

Prints the URL on one line ("replayground: serving ... at URL") once listening.
"""
import argparse
import functools
import http.server
import pathlib
import sys

CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; worker-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors {ancestors}"
)

# The project's own pages: everything else ending in .html, or a folder's
# index that is not one of these, is a host page.
OWN_PAGES = {"/", "/index.html", "/bench.html", "/embed.html", "/docs/", "/docs/index.html"}

# A host page's policy: the embed's module, worker, stylesheet and wasm come
# from this origin ('wasm-unsafe-eval' compiles the module); the page's own
# inline scripts and style attributes are its business.
EMBEDDING_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
    "worker-src 'self'; object-src 'none'; base-uri 'self'"
)


def is_host_page(path):
    """Whether `path` (no query) is an HTML page that is not the project's."""
    if path in OWN_PAGES:
        return False
    return path.endswith(".html") or path.endswith("/")


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".css": "text/css",
        ".svg": "image/svg+xml",
    }

    def end_headers(self):
        # embed.html exists to be framed by any documentation site; the rest only by this one.
        # (A request line too long to parse leaves no path: answer it as any other page.)
        path = getattr(self, "path", "") or ""
        bare = path.split("?", 1)[0]
        ancestors = "*" if bare.endswith("/embed.html") else "'self'"
        policy = EMBEDDING_CSP if is_host_page(bare) else CSP.format(ancestors=ancestors)
        self.send_header("Content-Security-Policy", policy)
        if not is_host_page(bare):
            # Everything the project's pages load is this origin's.
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            if bare in OWN_PAGES:
                self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format, *args):
        if self.server.verbose:
            super().log_message(format, *args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent / "www"))
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    if not (root / "index.html").is_file():
        sys.exit(f"serve: {root} has no index.html")
    handler = functools.partial(Handler, directory=str(root))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    except OSError as error:
        sys.exit(f"serve: cannot listen on 127.0.0.1:{args.port}: {error.strerror}; pass another --port")
    server.verbose = args.verbose
    host, port = server.server_address[:2]
    print(f"replayground: serving {root} at http://{host}:{port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
