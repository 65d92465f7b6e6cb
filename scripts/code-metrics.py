#!/usr/bin/env python3
"""The size and shape of the code, as issue reports and ARCHITECTURE.md quote them.

    python3 scripts/code-metrics.py            # a table for the tree as it is
    python3 scripts/code-metrics.py --rev REV  # the same for a commit (read with git show)
    python3 scripts/code-metrics.py --list     # and each long function, each function with
                                               # many parameters and each untyped error, by place

What it counts, per crate and in all (Rust sources under crates/*/src and src/, tests and
benches left out):
- lines;
- functions longer than 120 lines (from `fn` to its closing brace, braces in strings, chars
  and comments skipped), and functions taking six or more parameters;
- string lookups into JSON values (`["key"]` or `.get("key")` on a value: how untyped readers
  index result files);
- public fallible functions of library crates (all but src/ and crates/trainer) that return
  `anyhow::Result` or `Result<_, String>` (a library's errors should be typed).

No dependency beyond Python's standard library: it reads the files as text, so its numbers are
counts of a careful pattern match, not of a parser; they are for comparing two trees.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

LONG = 120
MANY_PARAMS = 6
LIBRARY_EXEMPT = ("src/", "crates/trainer/")


def files(rev: str | None) -> dict[str, str]:
    root = Path(__file__).resolve().parent.parent
    if rev is None:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root, capture_output=True, text=True, check=True).stdout
        names = [n for n in out.splitlines() if wanted(n)]
        return {n: (root / n).read_text() for n in names if (root / n).is_file()}
    out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev], cwd=root, capture_output=True, text=True, check=True).stdout
    return {
        n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=root, capture_output=True, text=True, check=True).stdout
        for n in out.splitlines()
        if wanted(n)
    }


def wanted(name: str) -> bool:
    if not name.endswith(".rs"):
        return False
    return name.startswith("src/") or (name.startswith("crates/") and "/src/" in name)


def crate_of(name: str) -> str:
    return "dhumbal (src)" if name.startswith("src/") else name.split("/")[1]


def strip(text: str) -> str:
    """The text with comments, string and char literals blanked (lengths and newlines kept)."""
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
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = len(re.match(r"r(#*)\"", text[i:]).group(1))
            end = '"' + "#" * hashes
            j = text.find(end, i + 2 + hashes)
            j = n if j < 0 else j + len(end)
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"')
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j]) + '"')
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x..'", text[i:i + 12]):
            m = re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x..'", text[i:i + 12])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def closing(code: str, start: int, opening: str = "{", closes: str = "}") -> int:
    """The index of the bracket that closes the one at `start` (the end of `code` if none)."""
    depth, j = 0, start
    while j < len(code):
        if code[j] in opening:
            depth += 1
        elif code[j] in closes:
            depth -= 1
            if depth == 0:
                break
        j += 1
    return j


def test_spans(code: str) -> list[tuple[int, int]]:
    """Character spans of `#[cfg(test)] mod ... { }` blocks."""
    spans = []
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{", code):
        spans.append((m.start(), closing(code, m.end() - 1)))
    return spans


FN = re.compile(r"\bfn\s+(\w+)\s*(<[^{;]*?>)?\s*\(")


def functions(code: str):
    """(name, first line, lines, parameters, signature) of every fn with a body."""
    for m in FN.finditer(code):
        # Parameters: to the matching ')'.
        j = closing(code, m.end() - 1, "([", ")]")
        params_text = code[m.end():j]
        k = j
        while k < len(code) and code[k] not in "{;":
            k += 1
        if k >= len(code) or code[k] == ";":
            continue
        signature = code[m.start():k]
        e = closing(code, k)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, e) + 1
        params = [p for p in split_top(params_text) if p.strip() and not re.fullmatch(r"\s*&?\s*('\w+\s+)?(mut\s+)?self\s*", p)]
        yield m.group(1), first, last - first + 1, len(params), signature, m.start()


def split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


LOOKUP = re.compile(r'\[\s*"[A-Za-z_][A-Za-z0-9_]*"\s*\]')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", help="a commit to measure instead of the working tree")
    ap.add_argument(
        "--list",
        action="store_true",
        help="also list the long functions, those with many parameters and the library's untyped errors",
    )
    args = ap.parse_args()
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    long_fns, many_params, untyped = [], [], []
    for name, text in sorted(files(args.rev).items()):
        crate = crate_of(name)
        row = rows[crate]
        row["lines"] += text.count("\n")
        code = strip(text)
        # Lookups are counted on the raw text (the key is a string) outside comments.
        # (blanked to the same length, so that positions agree with `code`'s test spans).
        no_comments = re.sub(r"//[^\n]*", lambda m: " " * len(m.group()), text)
        spans = test_spans(code)
        in_test = lambda pos: any(a <= pos <= b for a, b in spans)  # noqa: E731
        for m in LOOKUP.finditer(no_comments):
            if not in_test(m.start()):
                row["json lookups"] += 1
        for fname, first, length, nparams, sig, pos in functions(code):
            if in_test(pos):
                continue
            if length > LONG:
                row[f"fns > {LONG} lines"] += 1
                long_fns.append(f"{name}:{first} {fname} ({length} lines)")
            if nparams >= MANY_PARAMS:
                row[f"fns >= {MANY_PARAMS} params"] += 1
                many_params.append(f"{name}:{first} {fname} ({nparams} parameters)")
            public = re.search(r"(^|\n)\s*pub(\([^)]*\))?\s+(const\s+|async\s+|unsafe\s+)*$", code[:pos][-80:]) is not None
            if public and not name.startswith(LIBRARY_EXEMPT):
                ret = sig.split("->", 1)[1] if "->" in sig else ""
                string_error = re.match(r"\s*Result<.*,\s*String\s*>\s*(where.*)?$", ret, re.S) is not None
                anyhow_error = "anyhow::Result" in ret or (
                    re.fullmatch(r"\s*Result<[^,]*>\s*(where.*)?", ret, re.S) is not None and "use anyhow::Result" in code
                )
                if string_error or anyhow_error:
                    kind = "String" if string_error else "anyhow"
                    row[f"pub {kind} errors"] += 1
                    untyped.append(f"{name}:{code.count(chr(10), 0, pos) + 1} {fname} -> {ret.strip()}")
    cols = ["lines", f"fns > {LONG} lines", f"fns >= {MANY_PARAMS} params", "json lookups", "pub anyhow errors", "pub String errors"]
    print("| crate | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    total = defaultdict(int)
    for crate in sorted(rows):
        print(f"| {crate} | " + " | ".join(str(rows[crate][c]) for c in cols) + " |")
        for c in cols:
            total[c] += rows[crate][c]
    print("| all | " + " | ".join(str(total[c]) for c in cols) + " |")
    if args.list:
        print("\nfunctions over", LONG, "lines:")
        for f in sorted(long_fns):
            print("  " + f)
        print(f"\nfunctions with {MANY_PARAMS} or more parameters:")
        for f in sorted(many_params):
            print("  " + f)
        print("\nuntyped public errors in library crates:")
        for u in untyped:
            print("  " + u)
    return 0


if __name__ == "__main__":
    sys.exit(main())
