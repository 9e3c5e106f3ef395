#!/usr/bin/env python3
"""Checks the README and the book (docs/) against each other.

- The README is the front door: at most README_LINES lines.
- Every section the README had before the book existed is a heading of the
  book (the README's history is the git log's; its content lives on here).
- Every relative link of the README and of the book's chapters leads to a
  file that exists (a chapter's `../img/…` is served beside the book: it is
  read from www/).
- The built book (www/book/) has a page for every chapter of SUMMARY.md.

Usage: python3 scripts/book_check.py (after `mdbook build docs`).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "src"
BUILT = ROOT / "www" / "book"
README_LINES = 200

# The README's sections before the book (commit 6f3c20c).
SECTIONS = [
    "Quick start", "What the commands do", "The playground page", "The command line",
    "Take a counterexample home", "Scenario parameters", "Write your own scenario",
    "From a blank file to a counterexample", "Reference", "The built-ins are files too",
    "The engine: SQLite's real locking, in memory, in the browser",
    "The scheduler and the explorer", "Idempotency receipts", "Outbox and inbox",
    "Embedding a live scenario in documentation", "Publishing `www/` as a static site",
    "Using it from JavaScript", "Benchmarks", "Security and reliability", "Layout",
    "Libraries, and why these", "Status",
]


def headings(text):
    out, fence = set(), False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            out.add(line.lstrip("#").strip())
    return out


def links(text):
    """Relative link targets, without their anchors."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        yield target.split("#", 1)[0]


def main():
    problems = []
    readme = (ROOT / "README.md").read_text()
    lines = readme.count("\n")
    if lines > README_LINES:
        problems.append(f"README.md has {lines} lines; the front door keeps to {README_LINES}")
    chapters = sorted(DOCS.glob("*.md"))
    book = set()
    for chapter in chapters:
        book |= headings(chapter.read_text())
    for section in SECTIONS:
        if section not in book:
            problems.append(f"the README's section {section!r} is no heading of the book")
    for target in links(readme):
        if not (ROOT / target).exists():
            problems.append(f"README.md links to {target}, which does not exist")
    for chapter in chapters:
        for target in links(chapter.read_text()):
            here = (DOCS / target) if not target.startswith("../img/") else (ROOT / "www" / target[3:])
            if not here.exists():
                problems.append(f"docs/src/{chapter.name} links to {target}, which does not exist")
    summary = (DOCS / "SUMMARY.md").read_text()
    for target in re.findall(r"\]\(([^)]+\.md)\)", summary):
        page = BUILT / target.replace(".md", ".html")
        if not page.is_file():
            problems.append(f"the built book has no {page.relative_to(ROOT)} (run mdbook build docs)")
    for problem in problems:
        print(problem)
    print(f"book: {len(chapters) - 1} chapters, {len(SECTIONS)} sections of the old README found, "
          f"README {lines} lines" + (f"; {len(problems)} problems" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
