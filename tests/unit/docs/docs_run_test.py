#!/usr/bin/env python3
"""Unit tests of tests/e2e/docs/docs_run.py, the extractor and runner of the docs' shell blocks:
a block, a marked block, stray and malformed markers, placeholders known and unknown, a heredoc,
inline commands in runbooks, and the runner's report of a failing command's file and line.

    docs_run_test.py SOURCE_DIR
"""
import os
import pathlib
import sys
import tempfile
import unittest

ROOT = pathlib.Path(sys.argv.pop(1) if len(sys.argv) > 1 else ".").resolve()
sys.path.insert(0, str(ROOT / "tests" / "e2e" / "docs"))
import docs_run  # noqa: E402


def doc(*lines):
    return "\n".join(lines) + "\n"


class Extract(unittest.TestCase):
    def test_a_block_with_its_line(self):
        b = docs_run.extract("R.md", doc("# T", "", "```sh", "kubectl get nodes", "oc get mcp", "```"))
        self.assertEqual(len(b), 1)
        self.assertEqual((b[0].path, b[0].line, b[0].skip), ("R.md", 4, None))
        self.assertEqual(b[0].text, "kubectl get nodes\noc get mcp")

    def test_only_shell_blocks(self):
        text = doc("```yaml", "kind: Pod", "```", "```bash", "true", "```", "```", "plain", "```",
                   "~~~shell", "false", "~~~")
        self.assertEqual([b.text for b in docs_run.extract("R.md", text)], ["true", "false"])

    def test_an_indented_block_in_a_list_item(self):
        text = doc("1. Look:", "", "   ```sh", "   oc get pods \\", "     -A", "   ```")
        b = docs_run.extract("R.md", text)
        self.assertEqual(b[0].text, "oc get pods \\\n  -A")
        self.assertEqual(b[0].line, 4)

    def test_a_marked_block(self):
        text = doc("<!-- docs-run: skip (needs a real OpenShift cluster) -->", "", "```sh", "oc mirror", "```",
                   "```sh", "true", "```")
        b = docs_run.extract("R.md", text)
        self.assertEqual([x.skip for x in b], ["needs a real OpenShift cluster", None])

    def test_a_marker_with_no_block_after_it(self):
        for text in (doc("<!-- docs-run: skip (why) -->", "prose", "```sh", "true", "```"),
                     doc("```sh", "true", "```", "<!-- docs-run: skip (why) -->"),
                     doc("<!-- docs-run: skip (why) -->", "```yaml", "a: 1", "```")):
            with self.assertRaisesRegex(docs_run.DocError, r"R\.md:\d+: a docs-run marker"):
                docs_run.extract("R.md", text)

    def test_a_malformed_marker(self):
        for m in ("<!-- docs-run: skip -->", "<!-- docs-run: skip () -->", "<!-- docs-run: run -->"):
            with self.assertRaisesRegex(docs_run.DocError, "R.md:1: a docs-run comment not of the form"):
                docs_run.extract("R.md", doc(m, "```sh", "true", "```"))

    def test_an_unclosed_fence(self):
        with self.assertRaisesRegex(docs_run.DocError, "R.md:2: a code fence that is never closed"):
            docs_run.extract("R.md", doc("x", "```sh", "true"))

    def test_a_heredoc_stays_whole_and_is_no_placeholder(self):
        text = doc("```sh", "kubectl apply -f - <<EOF", "metadata: {name: <name>}", "EOF", "wc -l < /etc/hosts",
                   "diff <(echo a) <(echo a)", "```")
        b = docs_run.extract("R.md", text)[0]
        got = docs_run.substitute(b, {"name": "seed"}, {})
        self.assertEqual(got, "kubectl apply -f - <<EOF\nmetadata: {name: seed}\nEOF\nwc -l < /etc/hosts\n"
                              "diff <(echo a) <(echo a)")


class Placeholders(unittest.TestCase):
    def block(self, text):
        return docs_run.Block("R.md", 10, text)

    def test_known_placeholders_from_the_table_and_the_environment(self):
        table = {"node": "worker-0", "pod": "${POD}"}
        got = docs_run.substitute(self.block("oc logs <pod> # on <node>, <node>"), table, {"POD": "op-1"})
        self.assertEqual(got, "oc logs op-1 # on worker-0, worker-0")

    def test_an_unknown_placeholder_is_named_with_its_line(self):
        with self.assertRaisesRegex(docs_run.DocError, r"R\.md:11: unknown placeholder <migration>"):
            docs_run.substitute(self.block("true\noc describe vmim <migration>"), {"node": "n"}, {})

    def test_an_unset_variable_is_named(self):
        with self.assertRaisesRegex(docs_run.DocError, r"placeholder <pod> needs \$\{POD\}, which is not set"):
            docs_run.substitute(self.block("oc logs <pod>"), {"pod": "${POD}"}, {})

    def test_the_table(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# comment\nnode worker-0   # a node\n\npod ${POD}\n")
        try:
            self.assertEqual(docs_run.load_table(f.name), {"node": "worker-0", "pod": "${POD}"})
            with open(f.name, "a") as g:
                g.write("node again\n")
            with self.assertRaisesRegex(docs_run.DocError, "placeholder node is in the table twice"):
                docs_run.load_table(f.name)
        finally:
            os.unlink(f.name)


class Inline(unittest.TestCase):
    def test_inline_commands_outside_blocks_are_named(self):
        text = doc("1. See `oc get psirebalance x`, the `spec.metrics`", "   field, and `oc describe",
                   "   vmim m`.", "```sh", "`oc get pods`", "```")
        self.assertEqual(docs_run.inline_commands("R.md", text), [
            "R.md:1: the command `oc get psirebalance x` is shown inline: put it in a ```sh block (or mark it)",
            "R.md:2: the command `oc describe vmim m` is shown inline: put it in a ```sh block (or mark it)"])


class Run(unittest.TestCase):
    def test_failures_name_file_and_line_and_variables_carry(self):
        with tempfile.TemporaryDirectory() as d:
            b1 = docs_run.Block("R.md", 3, "NS=ns-1\nX=$(echo y)")
            b2 = docs_run.Block("R.md", 8, 'test "$NS" = ns-1\ntest "$X" = y\nfalse\necho unreached')
            b3 = docs_run.Block("R.md", 20, "echo 'No resources found in ns-1 namespace.'")
            b4 = docs_run.Block("R.md", 30, "sleep 5", skip=None)
            state = os.path.join(d, "state")
            self.assertIsNone(docs_run.run_block(b1, d, 10, state, d))
            report = docs_run.run_block(b2, d, 10, state, d)
            self.assertRegex(report, r"^R\.md:10: exit status 1")
            self.assertRegex(docs_run.run_block(b3, d, 10, state, d), r"^R\.md:20: 'No resources found'")
            self.assertRegex(docs_run.run_block(b4, d, 1, state, d), r"^R\.md:30: no end within 1 s")


if __name__ == "__main__":
    unittest.main()
