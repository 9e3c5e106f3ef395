"""Every TOML file the project ships is TOML 1.0, read by Python's tomllib.

The crate's parser (toml 1.x) reads TOML 1.1, which also allows inline tables
over several lines; users' editors, linters and other tools mostly read 1.0,
so the built-ins, libraries, conformance designs, the docs' designs, the
page's template and the README's examples keep to it. Run by tests/toml10.rs from the crate's root;
prints each file that is not TOML 1.0 and exits 1 if any.
"""
import glob
import html
import re
import sys
import tomllib

checked = 0
mistakes = []


def check(name, text):
    global checked
    checked += 1
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        mistakes.append(f"{name}: {e}")


for path in sorted(glob.glob("src/scenarios/builtin/*.toml") + glob.glob("src/scenarios/reach/*.toml") + glob.glob("tests/conformance/*.toml")
                   + glob.glob("www/docs/*.toml")):
    check(path, open(path, encoding="utf-8").read())
for path in ["README.md"] + sorted(glob.glob("docs/src/*.md")):
    for i, m in enumerate(re.finditer(r"```(?:toml|replayground[^\n]*)\n(.*?)```", open(path, encoding="utf-8").read(), re.S)):
        check(f"{path}, toml block {i + 1}", m.group(1))
for path in sorted(glob.glob("www/docs/*.html")):
    page = open(path, encoding="utf-8").read()
    for i, m in enumerate(re.finditer(r'<script type="application/toml"[^>]*>(.*?)</script>', page, re.S)):
        check(f"{path}, design {i + 1}", html.unescape(m.group(1)))
template = re.search(r"const TEMPLATE = `(.*?)`;", open("www/js/editor.js", encoding="utf-8").read(), re.S)
check("www/js/editor.js, the New design template", template.group(1) if template else "not found = [")
for mistake in mistakes:
    print(mistake)
print(f"{checked} TOML texts, {len(mistakes)} not TOML 1.0")
sys.exit(1 if mistakes else 0)
