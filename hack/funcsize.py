#!/usr/bin/env python3
"""funcsize: the length (lines) and parameter count of every C function definition in the
files named (or every .c file below the directories named), longest first.

    hack/funcsize.py [--max-lines N --max-params N] PATH...

With --max-lines/--max-params it prints only the functions over a limit and exits 1 when
there is one. It reads the project's layout (a definition starts at column 0 and its body
opens with "{" at column 0 or at the end of the signature, and closes with "}" at column 0);
it is a measure, not a C parser."""
import os
import re
import signal
import sys

SIG_START = re.compile(r"^[A-Za-z_][\w \t\*]*\b(\w+)\s*\(")


def params(sig):
    inner = sig[sig.index("(") + 1:sig.rindex(")")]
    inner = inner.strip()
    if not inner or inner == "void":
        return 0
    depth, n = 0, 1
    for ch in inner:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            n += 1
    return n


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = SIG_START.match(line)
        if not m or line.startswith(("typedef", "struct ", "enum ", "#")) and "(" not in line.split("{")[0]:
            i += 1
            continue
        if line.rstrip().endswith(";"):
            i += 1
            continue
        # gather the signature up to its closing parenthesis
        sig, j = line, i
        while sig.count("(") > sig.count(")") and j + 1 < len(lines):
            j += 1
            sig += " " + lines[j].strip()
        rest = sig[sig.rindex(")") + 1:].strip()
        if rest.startswith("{") and rest.endswith("}"):  # one line
            yield m.group(1), path, i + 1, 1, params(sig)
            i = j + 1
            continue
        if rest == "{" or (rest == "" and j + 1 < len(lines) and lines[j + 1] == "{"):
            k = j + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            yield m.group(1), path, i + 1, k - i + 1, params(sig)
            i = k + 1
            continue
        i = j + 1


def main(argv):
    max_lines = max_params = None
    args = []
    it = iter(argv)
    for a in it:
        if a == "--max-lines":
            max_lines = int(next(it))
        elif a == "--max-params":
            max_params = int(next(it))
        else:
            args.append(a)
    files = []
    for a in args:
        if os.path.isdir(a):
            for root, _, names in os.walk(a):
                files += [os.path.join(root, n) for n in names if n.endswith(".c")]
        else:
            files.append(a)
    found = [fn for f in sorted(files) for fn in functions(f)]
    found.sort(key=lambda x: (-x[3], x[1], x[2]))
    bad = 0
    for name, path, line, length, n in found:
        over = (max_lines is not None and length > max_lines) or (max_params is not None and n > max_params)
        if max_lines is None and max_params is None or over:
            print(f"{length:5d} lines {n:2d} params  {path}:{line} {name}")
            bad += over
    return 1 if bad else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    sys.exit(main(sys.argv[1:]))
