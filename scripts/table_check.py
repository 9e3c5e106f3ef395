#!/usr/bin/env python3
"""Checks that a chapter holds a table a command printed.

Usage: table_check.py CHAPTER OUTPUT. The table is OUTPUT's lines that
begin with '|'; the chapter must hold exactly those lines between its
'<!-- table:start -->' and '<!-- table:end -->' markers. With
REPLAYGROUND_BLESS=1 the chapter's table is rewritten instead.
"""
import os
import sys


def main():
    chapter, output = sys.argv[1], sys.argv[2]
    with open(output, encoding="utf-8") as f:
        table = [line.rstrip("\n") for line in f if line.startswith("|")]
    with open(chapter, encoding="utf-8") as f:
        text = f.read()
    start, end = "<!-- table:start -->\n", "<!-- table:end -->"
    if start not in text or end not in text:
        sys.exit(f"{chapter}: no table:start / table:end markers")
    before, rest = text.split(start, 1)
    shown, after = rest.split(end, 1)
    wanted = "\n".join(table) + "\n"
    if shown == wanted:
        return
    if os.environ.get("REPLAYGROUND_BLESS"):
        with open(chapter, "w", encoding="utf-8") as f:
            f.write(before + start + wanted + end + after)
        return
    sys.exit(
        f"{chapter}: its table is not the one the command printed; rerun with REPLAYGROUND_BLESS=1 and review the diff\n"
        f"printed:\n{wanted}shown:\n{shown}"
    )


if __name__ == "__main__":
    main()
