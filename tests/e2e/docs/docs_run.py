#!/usr/bin/env python3
"""The shell commands the docs tell a user to run, pulled out and run (Python 3, stdlib only).

What counts as a command block: a fenced code block (``` or ~~~, at any indentation, as in a
list item) whose info string starts with sh, bash or shell. Its text is the block's lines with
the fence's indentation removed; its line is the file line of its first command line.

The skip marker, the one form there is: an HTML comment on the line just before the fence (blank
lines between are allowed, nothing else):

    <!-- docs-run: skip (REASON) -->

REASON says why the block cannot run against the test bed (e.g. "needs a real OpenShift
cluster"); it may not be empty. A marker that no command block follows, or a "docs-run:" comment
of any other form, is an error: a marker cannot silently stop applying.

Placeholders: <word> in a block (a lowercase letter, then lowercase letters, digits, - or _, in
angle brackets; heredocs (<<EOF), redirections (< file) and process substitutions (<(...)) do
not match) are replaced by their value in the placeholder table. The table has one "NAME VALUE"
a line ("#" starts a comment); a VALUE may name environment variables as ${VAR}, filled from the
environment of this program (the test exports them: values the test knows only at run time). A
placeholder the table lacks, or a ${VAR} that is unset, is an error naming it.

In runbooks (--no-inline PATH) a command must not be shown only as inline code: an inline code
span starting with "oc " or "kubectl " outside a command block is an error naming its line, so
every command a runbook tells its reader to run is in a block this program runs or marks.

Running (run): the blocks of each file in order, each in a fresh `bash` with `set -euo pipefail`,
the repository as working directory, and the shell variables the earlier blocks of the same file
set (a runbook's first block sets NS for the rest); each block has a timeout, and whatever it
started in the background is killed when it ends. A block fails when it exits non-zero, times out,
or prints "No resources found" (a label, namespace or field selector that matches nothing on the
bed: a doc naming what the installed operator does not have). All failures are collected and
reported with FILE:LINE of the failing command and its output; the exit status is 1 if any.

    docs_run.py list  [--table FILE] [--no-inline PATH]... FILE...    the blocks, as JSON
    docs_run.py check [--table FILE] [--no-inline PATH]... FILE...    errors only (markers, placeholders)
    docs_run.py run   --table FILE [--timeout S] [--root DIR] [--no-inline PATH]... FILE...
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\s`]*)")
SHELLS = ("sh", "bash", "shell")
MARKER = re.compile(r"^\s*<!--\s*docs-run:\s*skip\s*\((?P<reason>.*\S.*)\)\s*-->\s*$")
ANY_MARKER = re.compile(r"<!--\s*docs-run")
PLACEHOLDER = re.compile(r"(?<![<\w])<(?P<name>[a-z][a-z0-9_-]*)>")
ENV_REF = re.compile(r"\$\{(?P<var>[A-Za-z_][A-Za-z0-9_]*)\}")
INLINE = re.compile(r"`([^`]+)`")
INLINE_COMMAND = re.compile(r"^\s*(oc|kubectl)\s")
NO_RESOURCES = "No resources found"


class DocError(Exception):
    """Bad input in a doc or the table: the message names the file, the line and why."""


class Block:
    def __init__(self, path, line, text, skip=None):
        self.path, self.line, self.text, self.skip = path, line, text, skip

    def where(self, offset=0):
        return "%s:%d" % (self.path, self.line + offset)

    def as_dict(self):
        return {"file": self.path, "line": self.line, "text": self.text, "skip": self.skip}


def _dedent(line, indent):
    return line[len(indent):] if line.startswith(indent) else line.lstrip(" \t")


def extract(path, text):
    """The fenced blocks of TEXT (the contents of PATH): shell blocks with their marker, as Block;
    raises DocError for a stray or malformed marker and for an unclosed fence."""
    lines = text.split("\n")
    blocks, errors = [], []
    pending = None  # (line number, reason) of a marker waiting for its block
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m:
            close = re.compile(r"^[ \t]*" + re.escape(m["fence"][0]) + "{%d,}[ \t]*$" % len(m["fence"]))
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            if j == len(lines):
                raise DocError("%s:%d: a code fence that is never closed" % (path, i + 1))
            if m["info"].split(",")[0] in SHELLS:
                body = "\n".join(_dedent(l, m["indent"]) for l in lines[i + 1:j])
                blocks.append(Block(path, i + 2, body, pending[1] if pending else None))
            elif pending:
                errors.append("%s:%d: a docs-run marker before a block that is not shell (%s)"
                              % (path, pending[0], m["info"] or "no info string"))
            pending = None
            i = j + 1
            continue
        mk = MARKER.match(line)
        if mk:
            if pending:
                errors.append("%s:%d: a docs-run marker that no command block follows" % (path, pending[0]))
            pending = (i + 1, mk["reason"].strip())
        elif ANY_MARKER.search(line):
            errors.append("%s:%d: a docs-run comment not of the form <!-- docs-run: skip (REASON) -->"
                          % (path, i + 1))
        elif pending and line.strip():
            errors.append("%s:%d: a docs-run marker that no command block follows" % (path, pending[0]))
            pending = None
        i += 1
    if pending:
        errors.append("%s:%d: a docs-run marker that no command block follows" % (path, pending[0]))
    if errors:
        raise DocError("\n".join(errors))
    return blocks


def inline_commands(path, text):
    """Errors for commands shown only as inline code (`oc ...`, `kubectl ...`) outside blocks."""
    errors, in_fence, close = [], False, None
    prose = []  # (line number, text) of the lines outside fences
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if not in_fence and m:
            in_fence, close = True, re.compile(r"^[ \t]*" + re.escape(m["fence"][0]) + "{%d,}[ \t]*$" % len(m["fence"]))
        elif in_fence and close.match(line):
            in_fence = False
        elif not in_fence:
            prose.append((n, line))
    # inline code may wrap: join the prose, remembering where each line starts
    joined, starts = "", []
    for n, line in prose:
        starts.append((len(joined), n))
        joined += line + "\n"
    for m in INLINE.finditer(joined):
        if INLINE_COMMAND.match(m.group(1)):
            n = max(s for s in starts if s[0] <= m.start())[1]
            errors.append("%s:%d: the command `%s` is shown inline: put it in a ```sh block (or mark it)"
                          % (path, n, " ".join(m.group(1).split())))
    return errors


def load_table(path):
    """The placeholder table: {name: value}; raises DocError for a malformed line."""
    table = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            if len(parts) != 2 or not re.fullmatch(r"[a-z][a-z0-9_-]*", parts[0]):
                raise DocError("%s:%d: want 'NAME VALUE' (NAME lowercase), got '%s'" % (path, n, line))
            if parts[0] in table:
                raise DocError("%s:%d: placeholder %s is in the table twice" % (path, n, parts[0]))
            table[parts[0]] = parts[1]
    return table


def substitute(block, table, environ):
    """BLOCK's text with every <placeholder> replaced from TABLE (its ${VAR}s from ENVIRON);
    raises DocError naming each unknown placeholder and unset variable."""
    errors = []

    def value(m):
        name = m["name"]
        if name not in table:
            errors.append("%s: unknown placeholder <%s> (add it to the placeholder table)"
                          % (block.where(block.text[:m.start()].count("\n")), name))
            return m.group(0)

        def env(e):
            if e["var"] not in environ:
                errors.append("%s: placeholder <%s> needs ${%s}, which is not set"
                              % (block.where(block.text[:m.start()].count("\n")), name, e["var"]))
                return e.group(0)
            return environ[e["var"]]

        return ENV_REF.sub(env, table[name])

    text = PLACEHOLDER.sub(value, block.text)
    if errors:
        raise DocError("\n".join(errors))
    return text


def collect(files, no_inline, table, environ):
    """Every block of FILES (placeholders filled in the ones that run) and every error."""
    blocks, errors = [], []
    for path in files:
        with open(path) as f:
            text = f.read()
        try:
            found = extract(path, text)
        except DocError as e:
            errors.append(str(e))
            continue
        if path in no_inline:
            errors.extend(inline_commands(path, text))
        for b in found:
            if b.skip is None and table is not None:
                try:
                    b.text = substitute(b, table, environ)
                except DocError as e:
                    errors.append(str(e))
            blocks.append(b)
    return blocks, errors


# The script a block runs as: the earlier blocks' variables, the block, then its variables saved.
# PRELUDE_LINES is the number of lines before the block's first line.
PRELUDE = """__base=$(compgen -v)
[ ! -s "$DOCS_RUN_STATE" ] || source "$DOCS_RUN_STATE"
trap 'echo "$LINENO" >"$DOCS_RUN_FAILED_AT"' ERR
set -euo pipefail
"""
PRELUDE_LINES = PRELUDE.count("\n")
EPILOGUE = """
trap - ERR
for __v in $(compgen -v); do
  case $__v in __*|BASH*|FUNCNAME|PIPESTATUS|LINENO|RANDOM|SECONDS|SRANDOM|EPOCH*|_) continue ;; esac
  grep -qx -- "$__v" <<<"$__base" || declare -p "$__v"
done >"$DOCS_RUN_STATE.new"
mv -f "$DOCS_RUN_STATE.new" "$DOCS_RUN_STATE"
"""


def run_block(block, root, timeout, state, workdir):
    """Run BLOCK; None when it passed, else a report naming FILE:LINE and its output."""
    failed_at = os.path.join(workdir, "failed-at")
    out_path = os.path.join(workdir, "out")
    if os.path.exists(failed_at):
        os.unlink(failed_at)
    env = dict(os.environ, DOCS_RUN_STATE=state, DOCS_RUN_FAILED_AT=failed_at)
    script = PRELUDE + block.text + "\n" + EPILOGUE
    with open(out_path, "w+") as out:
        p = subprocess.Popen(["bash", "--noprofile", "--norc", "-c", script], cwd=root, env=env,
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
            why = None if rc == 0 else "exit status %d" % rc
        except subprocess.TimeoutExpired:
            why = "no end within %d s" % timeout
        try:  # the block's background processes go with it
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        out.seek(0)
        output = out.read()
    if why is None and NO_RESOURCES in output:
        why = "'%s': it names a label, namespace or field the bed does not have" % NO_RESOURCES
    if why is None:
        return None
    where = block.where()
    if os.path.exists(failed_at):
        with open(failed_at) as f:
            n = f.read().strip()
        if n.isdigit() and int(n) > PRELUDE_LINES:
            where = block.where(int(n) - PRELUDE_LINES - 1)
    tail = "\n".join(l if len(l) <= 300 else l[:300] + " ..." for l in output.rstrip("\n").split("\n")[-30:])
    return "%s: %s\n  the block:\n%s\n  its output (last 30 lines, each cut at 300 characters):\n%s" % (
        where, why, _indent(block.text), _indent(tail or "(none)"))


def _indent(text):
    return "\n".join("    | " + l for l in text.split("\n"))


def run(blocks, root, timeout):
    failures, ran, skipped = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="docs-run.") as workdir:
        states = {}
        for b in blocks:
            if b.skip is not None:
                skipped += 1
                print("skip - %s (%s)" % (b.where(), b.skip))
                continue
            state = states.setdefault(b.path, os.path.join(workdir, "state-%d" % len(states)))
            ran += 1
            report = run_block(b, root, timeout, state, workdir)
            if report:
                failures.append(report)
                print("FAIL - %s" % report.split("\n", 1)[0])
            else:
                print("ok   - %s" % b.where())
    print("docs-run: %d blocks, %d run, %d failed, %d marked skip" % (ran + skipped, ran, len(failures), skipped))
    for f in failures:
        print("\n" + f)
    return 1 if failures else 0


def main(argv):
    ap = argparse.ArgumentParser(description="Pull out and run the shell blocks of Markdown docs.")
    ap.add_argument("action", choices=("list", "check", "run"))
    ap.add_argument("--table", help="the placeholder table")
    ap.add_argument("--timeout", type=int, default=60, help="seconds each block may take (default 60)")
    ap.add_argument("--root", default=".", help="the directory blocks run in (default: here)")
    ap.add_argument("--no-inline", action="append", default=[], metavar="PATH",
                    help="a file whose commands must all be in blocks (repeat for more)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    if a.action == "run" and not a.table:
        ap.error("run needs --table")
    try:
        table = load_table(a.table) if a.table else None
    except (DocError, OSError) as e:
        print("docs-run: %s" % e, file=sys.stderr)
        return 2
    blocks, errors = collect(a.files, set(a.no_inline), table, os.environ)
    if errors:
        print("docs-run: the docs cannot be run as written:\n" + "\n".join(errors), file=sys.stderr)
        return 1
    if a.action == "list":
        json.dump([b.as_dict() for b in blocks], sys.stdout, indent=1)
        print()
        return 0
    if a.action == "check":
        print("docs-run: %d blocks, %d marked skip" % (len(blocks), sum(b.skip is not None for b in blocks)))
        return 0
    return run(blocks, a.root, a.timeout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
