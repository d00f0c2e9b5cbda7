"""The README's promises that can drift: its tool table and its test command."""

from __future__ import annotations

from pathlib import Path

from client.tools.catalogue import TOOLS, markdown_table

README = (Path(__file__).parent.parent / "README.md").read_text()


def test_tool_table_matches_the_models() -> None:
    assert markdown_table() in README
    assert all(f"| {name} |" in README for name in TOOLS)


def test_ci_runs_the_readme_test_command() -> None:
    ci = (Path(__file__).parent.parent / ".ci" / "run").read_text()
    assert "bash scripts/test" in README and "bash scripts/test" in ci


def test_every_setting_is_documented() -> None:
    from client.settings import Settings

    missing = [f for f in Settings.model_fields if f"BROWSERQ_{f.upper()}" not in README]
    assert missing == []
