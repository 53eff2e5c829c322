#!/usr/bin/env python3
"""The size rules we keep (HOUSE-STYLE.md), measured on Sources/.

    scripts/sizes.py check     exit 1 and name each file, function or executable over its limit
    scripts/sizes.py report    lines per module, files over 500 lines, the longest functions, unsafe-pointer uses

Limits: a source file at most 600 lines; a function (func, init, deinit, subscript, accessor) at most 80 lines
from its declaration to its closing brace, outside the bench; an executable's folder at most 300 lines.
A limit is raised only here, in EXCEPTIONS, with the reason beside it.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SOURCES = os.path.join(ROOT, "Sources")
FILE_LIMIT = 600
FUNCTION_LIMIT = 80
EXECUTABLE_LIMIT = 300
# Executable targets: their folders hold wiring only (Package.swift's executableTarget names).
EXECUTABLES = ["whereabouts", "whereabouts-agent", "whereabouts-locator", "whereabouts-bench", "whereabouts-fuzz-hci"]
# Folders whose functions may be longer: a benchmark reads best as one measured sequence.
FUNCTION_EXEMPT = ["whereabouts-bench", "WhereaboutsBench"]
# path relative to Sources/ -> (limit, why). Keep this empty when you can.
EXCEPTIONS = {}

DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|private|fileprivate|internal|package|open|static|class|final|override|mutating|nonmutating|"
    r"nonisolated|consuming|borrowing|convenience|required|dynamic|isolated|async|lazy)(?:\([^)]*\))?\s+)*"
    r"(func\s+[^\s(<]+|init[?!]?|deinit|subscript)\b"
)


def strip_code(text):
    """Returns the text with comments and string literals blanked (newlines kept), so braces can be counted."""
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
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            start = i + hashes
            multiline = text.startswith('"""', start)
            quote = '"""' if multiline else '"'
            close = quote + "#" * hashes
            j = start + len(quote)
            while j < n:
                if hashes == 0 and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(close, j):
                    j += len(close)
                    break
                if not multiline and text[j] == "\n":
                    break
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """Yields (name, first line, length in lines) for each function-like declaration with a body."""
    with open(path, encoding="utf-8") as f:
        code = strip_code(f.read())
    lines = code.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for number, line in enumerate(lines):
        match = DECLARATION.match(line)
        if not match:
            continue
        # The body opens at the first "{" after the declaration's parameters; a protocol requirement has none.
        i, depth_paren = offsets[number] + match.end(), 0
        while i < len(code):
            ch = code[i]
            if ch in "([":
                depth_paren += 1
            elif ch in ")]":
                depth_paren -= 1
            elif ch == "{" and depth_paren == 0:
                break
            elif depth_paren == 0 and ch == "\n" and re.match(r"\s*(func|var|let|case|init|}|@|public|private)\b", code[i + 1 :]):
                i = -1
                break
            i += 1
        if i < 0 or i >= len(code):
            continue
        depth, j = 0, i
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        last = code.count("\n", 0, j)
        yield match.group(1).replace("func ", "").strip(), number + 1, last - number + 1


def swift_files():
    for folder, _, names in sorted(os.walk(SOURCES)):
        for name in sorted(names):
            if name.endswith(".swift"):
                yield os.path.join(folder, name)


def line_count(path):
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def module_of(path):
    return os.path.relpath(path, SOURCES).split(os.sep)[0]


def check():
    problems = []
    per_module = {}
    for path in swift_files():
        rel = os.path.relpath(path, SOURCES)
        count = line_count(path)
        per_module[module_of(path)] = per_module.get(module_of(path), 0) + count
        limit = EXCEPTIONS.get(rel, (FILE_LIMIT, ""))[0]
        if count > limit:
            problems.append(f"{rel}: {count} lines (limit {limit})")
        if module_of(path) in FUNCTION_EXEMPT:
            continue
        for name, first, length in functions(path):
            key = f"{rel}:{name}"
            limit = EXCEPTIONS.get(key, (FUNCTION_LIMIT, ""))[0]
            if length > limit:
                problems.append(f"{rel}:{first}: {name} is {length} lines (limit {limit})")
    for executable in EXECUTABLES:
        count = per_module.get(executable, 0)
        limit = EXCEPTIONS.get(executable, (EXECUTABLE_LIMIT, ""))[0]
        if count > limit:
            problems.append(f"{executable}/: {count} lines (limit {limit} for an executable)")
    for problem in problems:
        print(f"size rule broken: {problem}", file=sys.stderr)
    return 1 if problems else 0


def report():
    per_module, big, all_functions, unsafe, unsafe_where = {}, [], [], 0, {}
    for path in swift_files():
        rel = os.path.relpath(path, SOURCES)
        count = line_count(path)
        per_module[module_of(path)] = per_module.get(module_of(path), 0) + count
        if count > 500:
            big.append((count, rel))
        with open(path, encoding="utf-8") as f:
            uses = len(re.findall(r"\b(with)?[Uu]nsafe\w*", strip_code(f.read())))
            unsafe += uses
            if uses:
                folder = os.path.dirname(rel)
                unsafe_where[folder] = unsafe_where.get(folder, 0) + uses
        for name, first, length in functions(path):
            all_functions.append((length, f"{rel}:{first} {name}"))
    print("lines per module:")
    for module, count in sorted(per_module.items(), key=lambda item: -item[1]):
        print(f"  {count:6} {module}")
    print(f"  {sum(per_module.values()):6} in all")
    print("files over 500 lines:")
    for count, rel in sorted(big, reverse=True):
        print(f"  {count:6} {rel}")
    print("the ten longest functions:")
    for length, where in sorted(all_functions, reverse=True)[:10]:
        print(f"  {length:6} {where}")
    over = [f for f in all_functions if f[0] > FUNCTION_LIMIT]
    print(f"functions over {FUNCTION_LIMIT} lines: {len(over)}")
    print(f"unsafe uses (Unsafe… types, withUnsafe… calls, unsafe… names): {unsafe}, by folder:")
    for folder, uses in sorted(unsafe_where.items(), key=lambda item: -item[1]):
        print(f"  {uses:6} {folder}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("check", "report"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(check() if sys.argv[1] == "check" else report())
