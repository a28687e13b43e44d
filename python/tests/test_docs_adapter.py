"""The adapter of docs/python.md: under 30 lines, clean on compactsim's batch suite."""
import os
import re
import sys

from compactsim import runner

ADAPTER_LINES_MAX = 30


def docs_adapter(repo):
    with open(os.path.join(repo, "docs", "python.md"), encoding="utf-8") as f:
        text = f.read()
    found = re.search(r"<!-- sdk-adapter -->\n```python\n(.*?)```", text, re.S)
    assert found, "docs/python.md: no python block after <!-- sdk-adapter -->"
    return found.group(1)


def test_the_docs_adapter_is_short_and_clean(tmp_path, repo, sdk_env, monkeypatch):
    source = docs_adapter(repo)
    assert len(source.splitlines()) < ADAPTER_LINES_MAX
    (tmp_path / "keep_recent.py").write_text(source)
    monkeypatch.setenv("PYTHONPATH", sdk_env["PYTHONPATH"])
    result = runner.run([sys.executable, "keep_recent.py"], tmp_path / "out", cwd=tmp_path,
                        cases=16, strategy="batch", jobs=1)
    assert result.clean, result.stdout
    assert result.report["summary"]["totals"]["cases"] == 16
