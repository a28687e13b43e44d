"""junit.xml of run, sweep, scenario, selftest, matrix and merge validates against the common
JUnit schema committed in docs/schemas/junit.xsd (Jenkins xunit-plugin junit-10.xsd),
with `xmlschema` (pinned in scripts/wheel.sh). A junit.xml that breaks the schema fails:
the last test feeds the validator broken files."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import xmlschema

from compactsim import runner

XMLSCHEMA_PINNED = "4.3.2"

REFERENCE_ADAPTER = [sys.executable, "adapters/reference/compactor.py"]

MATRIX = """
format = 1

[[finding]]
id = "F1"
scenario = "scenarios/fixtures/rewrite-tail.toml"
adapter = "batch"

[[release]]
name = "reference"
python = "{python}"
adapters = {{ batch = "{{python}} adapters/reference/compactor.py" }}

[[release]]
name = "planted"
python = "{python}"
adapters = {{ batch = "{{python}} adapters/reference/fixtures/rewrite_tail.py" }}

[[release]]
name = "gone"
python = "target/no-such-venv/bin/python"
adapters = {{ batch = "{{python}} adapters/reference/compactor.py" }}
"""


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def schema():
    import importlib.metadata
    assert importlib.metadata.version("xmlschema") == XMLSCHEMA_PINNED
    return xmlschema.XMLSchema(os.path.join(REPO, "docs", "schemas", "junit.xsd"))


def compactsim(repo, *args):
    proc = subprocess.run([runner.binary(), *args], cwd=repo, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def junit_of(schema, out_dir):
    path = os.path.join(out_dir, "junit.xml")
    errors = [f"{e.reason} at {e.path}" for e in schema.iter_errors(path)]
    assert not errors, "\n".join(errors)
    return ET.parse(path).getroot()


def cases_of(root):
    return root.findall("./testsuite/testcase")


def failures(root):
    return [(c.get("name"), c.find("failure")) for c in cases_of(root)
            if c.find("failure") is not None]


def assert_timed(root):
    """Every test case has a time in seconds, and the suite's is their sum (to the
    millisecond each is written in); no assertion on the times' values."""
    times = [float(c.get("time")) for c in cases_of(root)]
    assert times and all(t >= 0 for t in times)
    suite = float(root.find("./testsuite").get("time"))
    assert abs(suite - sum(times)) <= 0.001 * (len(times) + 1), (suite, times)


def test_a_failing_run_writes_valid_junit_a_case_each_failures_typed(schema, repo, tmp_path):
    code, text = compactsim(repo, "run", "--bug", "H-75345-B", "--cases", "6", "--passes", "8",
                            "--shrink-time", "0", "--jobs", "1", "--out", str(tmp_path))
    assert code == 1, text
    root = junit_of(schema, tmp_path)
    assert [c.get("name") for c in cases_of(root)] == [f"case-{i}" for i in range(6)]
    assert_timed(root)
    failed = failures(root)
    assert failed, text
    for _, f in failed:
        assert f.get("type") and f.get("message").startswith(f.get("type") + " at turn")
        assert "repro: compactsim replay" in f.text and "--bug H-75345-B" in f.text


def test_merge_writes_valid_junit_the_shards_cases_in_case_order(schema, repo, tmp_path):
    run = ["run", "--bug", "H-75345-B", "--cases", "6", "--passes", "8", "--shrink-time", "0",
           "--jobs", "1"]
    for k in (1, 0):
        code, text = compactsim(repo, *run, "--shard", f"{k}/2", "--out", str(tmp_path / f"s{k}"))
        assert code in (0, 1), text
    code, text = compactsim(repo, "merge", str(tmp_path / "s1"), str(tmp_path / "s0"),
                            "--out", str(tmp_path / "merged"))
    assert code == 1, text
    root = junit_of(schema, tmp_path / "merged")
    assert [c.get("name") for c in cases_of(root)] == [f"case-{i}" for i in range(6)]
    assert_timed(root)
    shard_failures = sum(len(failures(junit_of(schema, tmp_path / f"s{k}"))) for k in (0, 1))
    assert len(failures(root)) == shard_failures > 0
    for _, f in failures(root):
        assert f.get("type") and "repro: compactsim replay" in f.text


def test_sweep_writes_valid_junit_a_case_per_seed_and_case(schema, repo, tmp_path):
    code, text = compactsim(repo, "sweep", "--seeds", "1..2", "--cases", "3", "--passes", "4",
                            "--jobs", "1", "--out", str(tmp_path))
    assert code == 0, text
    root = junit_of(schema, tmp_path)
    classes = sorted({c.get("classname").split(".")[0] for c in cases_of(root)})
    assert len(cases_of(root)) == 6 and classes == ["seed-1", "seed-2"]


def test_scenario_writes_valid_junit_with_measured_times(schema, repo, tmp_path):
    code, text = compactsim(repo, "scenario", "scenarios/fixtures", "--out", str(tmp_path))
    assert code == 0, text
    root = junit_of(schema, tmp_path)
    assert len(cases_of(root)) >= 6
    assert_timed(root)


def test_selftest_writes_valid_junit_a_case_per_row(schema, repo, tmp_path):
    code, text = compactsim(repo, "selftest", "--compactor", "external", "--adapter",
                            " ".join(REFERENCE_ADAPTER), "--seeds", "1..1", "--cases", "4",
                            "--jobs", "2", "--out", str(tmp_path))
    assert code in (0, 1), text
    root = junit_of(schema, tmp_path)
    names = [c.get("name") for c in cases_of(root)]
    assert any(n.startswith("clean ") for n in names), names
    assert len(names) > 3, names


def test_the_bug_catalogue_selftest_writes_valid_junit_too_low_rows_typed(schema, repo,
                                                                         tmp_path):
    # 4 cases of one seed: many rows catch too few, so some test cases fail (exit 1).
    code, text = compactsim(repo, "selftest", "--seeds", "1..1", "--cases", "4",
                            "--shrink-attempts", "1", "--jobs", "2", "--out", str(tmp_path))
    assert code == 1, text
    root = junit_of(schema, tmp_path)
    assert len(cases_of(root)) > 30
    failed = failures(root)
    assert failed, text
    for name, f in failed:
        assert f.get("message").startswith(name.split()[0] + " under "), name
        assert "TOO LOW" in f.text and "repro: compactsim sweep --seeds 1..1" in f.text


def test_matrix_writes_valid_junit_a_case_per_release_and_finding(schema, repo, tmp_path):
    matrix = tmp_path / "m.toml"
    matrix.write_text(MATRIX.format(python=sys.executable))
    out = tmp_path / "out"
    code, text = compactsim(repo, "matrix", str(matrix), "--cases", "1", "--jobs", "2",
                            "--out", str(out))
    assert code == 0, text
    root = junit_of(schema, out)
    by_class = {c.get("classname"): c for c in cases_of(root)}
    assert sorted(by_class) == ["matrix.gone", "matrix.planted", "matrix.reference"]
    planted = by_class["matrix.planted"].find("failure")
    assert planted is not None and planted.get("type") == "kept-rows-intact"
    assert by_class["matrix.gone"].find("skipped") is not None
    assert by_class["matrix.reference"].find("failure") is None


BROKEN = {
    "a test case without a name": '<testsuites><testsuite name="s" tests="1" failures="0" '
                                  'errors="0"><testcase classname="c"/></testsuite></testsuites>',
    "a suite without its counts": '<testsuites><testsuite name="s"><testcase name="t"/>'
                                  '</testsuite></testsuites>',
    "a time that is not a number": '<testsuites><testsuite name="s" tests="1" failures="0" '
                                   'errors="0" time="1.5s"/></testsuites>',
    "skipped on the root": '<testsuites skipped="0"><testsuite name="s" tests="0" failures="0" '
                           'errors="0"/></testsuites>',
    "an unknown element": '<testsuites><testsuite name="s" tests="1" failures="0" errors="0">'
                          '<testcase name="t"><oops/></testcase></testsuite></testsuites>',
}


@pytest.mark.parametrize("what", sorted(BROKEN))
def test_a_junit_that_breaks_the_schema_fails_the_check(schema, tmp_path, what):
    (tmp_path / "junit.xml").write_text(BROKEN[what])
    with pytest.raises(AssertionError):
        junit_of(schema, tmp_path)
