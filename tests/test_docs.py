"""The manual in docs/ (MkDocs, mkdocs.yml) builds without a broken link, documents every setting as
`transq settings` prints it, and the README stays a README."""

import os
import subprocess
import sys
from pathlib import Path

from shared.settings import Settings
from shared.settings.environment import settings_table

ROOT = Path(__file__).resolve().parents[1]


def test_the_docs_build_strictly(tmp_path):
    """`mkdocs build --strict` (and mkdocs.yml's `validation`): a link to a missing page, to a missing
    heading inside one, or outside docs/ fails the build, as does a page left out of the nav."""
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stdout}\n{built.stderr}"
    assert (tmp_path / "site" / "index.html").is_file()


def test_the_settings_page_documents_every_setting_with_its_default():
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    table = settings_table(Settings)
    for row in table.splitlines()[2:]:
        assert row in page, f"docs/settings.md's settings table is out of date: {row.split('|')[1].strip()}"
    assert table in page, "docs/settings.md's settings table is not the one `transq settings` prints"


def test_the_readme_is_at_most_250_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move the detail to docs/"
