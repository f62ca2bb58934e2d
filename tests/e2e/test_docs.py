"""What the README shows is what the project produces."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_readme_example_comment_is_generated_not_handwritten():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "example_comment.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    readme = (ROOT / "README.md").read_text()
    assert "### ❌ toolselect failed: accuracy" in readme  # the block is filled in
    assert "#### 🔻 toolselect: the model picks `get_forecast` worse since this change" in readme
