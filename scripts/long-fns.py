#!/usr/bin/env python3
"""List Rust functions longer than a threshold, longest first.

Usage: scripts/long-fns.py [MIN_LINES] [PATH...]   (defaults: 80, src crates/*/src)

A function's length runs from its `fn` line to the line of its closing brace,
both counted. Strings, raw strings, char literals and comments are skipped when
matching braces, so `format!("{x}")` does not skew the count. Test code is
included and marked `test` when it carries `#[test]`, sits in a `#[cfg(test)] mod {}`,
or in a file reached by `#[cfg(test)] mod name;` or named `tests.rs`/`*_tests.rs`,
so the production code's figures can be read apart.
"""

import glob
import os
import re
import signal
import sys

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
                r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


def code_only(text):
    """The text with strings, chars and comments blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 260])) and (i == 0 or not (
                text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and (m := re.match(r"'(\\(x..|u\{[0-9a-fA-F]+\}|.)|[^\\\n])'", text[i:i + 12])):
            out.append(" " * m.end())
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_end(lines, start):
    """Index of the line closing the first brace opened at or after `start`, or None
    when a `;` ends the item first (a declaration without a body)."""
    depth, opened = 0, False
    for j in range(start, len(lines)):
        for ch in lines[j]:
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return j
            elif ch == ";" and not opened:
                return None
    return None


def cfg_test_items(lines):
    """(line index, item line) of each item under `#[cfg(test)]`, skipping further attributes."""
    for idx, line in enumerate(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", line):
            j = idx + 1
            while j < len(lines) and re.match(r"\s*(#\[|$)", lines[j]):
                j += 1
            if j < len(lines):
                yield j, lines[j]


def test_files(paths):
    """Files that are only compiled for tests: `#[cfg(test)] mod name;` targets."""
    found = set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        base = os.path.basename(path)
        folder = os.path.dirname(path)
        if base not in ("mod.rs", "lib.rs", "main.rs"):
            folder = os.path.join(folder, base[:-3])
        for _, item in cfg_test_items(lines):
            if m := re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", item):
                found.add(os.path.join(folder, m.group(1) + ".rs"))
                found.add(os.path.join(folder, m.group(1), "mod.rs"))
    return found


def functions(path, is_test_file):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    raw = text.split("\n")
    lines = code_only(text).split("\n")
    test_ranges = []
    for j, item in cfg_test_items(lines):
        if re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", item):
            end = block_end(lines, j)
            if end is not None:
                test_ranges.append((j, end))
    for idx, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        end = block_end(lines, idx)
        if end is None:
            continue
        k = idx - 1
        attrs = []
        while k >= 0 and re.match(r"\s*(#\[|///|//)", raw[k]):
            attrs.append(raw[k])
            k -= 1
        is_test = (is_test_file
                   or any(a <= idx <= b for a, b in test_ranges)
                   or any(re.match(r"\s*#\[(test|cfg\(test\))\]", a) for a in attrs))
        yield m.group(1), idx + 1, end - idx + 1, is_test


def main(argv):
    limit = int(argv[0]) if argv else 80
    roots = argv[1:] or ["src"] + sorted(glob.glob("crates/*/src"))
    paths = []
    for root in roots:
        paths += [root] if root.endswith(".rs") else glob.glob(f"{root}/**/*.rs", recursive=True)
    # Which files are test-only is read off every source file, not only those listed.
    everything = [p for r in ["src"] + glob.glob("crates/*/src")
                  for p in glob.glob(f"{r}/**/*.rs", recursive=True)]
    tests = test_files(set(everything) | set(paths))
    rows = []
    for path in sorted(paths):
        base = os.path.basename(path)
        is_test_file = path in tests or base == "tests.rs" or base.endswith("_tests.rs")
        for name, line, length, is_test in functions(path, is_test_file):
            if length > limit:
                rows.append((length, f"{path}:{line}", name, "test" if is_test else ""))
    for length, where, name, tag in sorted(rows, key=lambda r: (-r[0], r[1])):
        print(f"{length:5}  {where}  {name}  {tag}".rstrip())
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    sys.exit(main(sys.argv[1:]))
