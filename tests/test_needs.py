"""tests/needs.py, the one rule for a missing tool: skip with the reason locally, fail under CI."""

from __future__ import annotations

from pathlib import Path

import needs
import pytest

from slidegen.write import pdf


@pytest.fixture
def local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")


@pytest.mark.parametrize(
    ("value", "is_ci"),
    [("1", True), ("true", True), ("TRUE", True), ("yes", True), ("", False), ("0", False), ("false", False)],
)
def test_the_ci_variable(value: str, is_ci: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", value)
    assert needs.in_ci() is is_ci


def test_missing_skips_locally_with_the_reason(local: None) -> None:
    with pytest.raises(pytest.skip.Exception, match="^no frobnicator$"):
        needs.missing("no frobnicator")


def test_missing_fails_under_ci(ci: None) -> None:
    with pytest.raises(pytest.fail.Exception, match=r"^no frobnicator \(CI is set, so this test must run\)$"):
        needs.missing("no frobnicator")


def test_tool_names_the_debian_package(local: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match=r"^pdfinfo not found \(Debian package poppler-utils\)$"):
        needs.tool("pdfinfo", "poppler-utils")
    program = tmp_path / "pdfinfo"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    assert needs.tool("pdfinfo", "poppler-utils") == str(program)


def test_chromium_is_the_products_lookup(ci: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SLIDEGEN_CHROMIUM", str(tmp_path / "no-such-browser"))
    with pytest.raises(pytest.fail.Exception, match="SLIDEGEN_CHROMIUM=.*no-such-browser.*CI is set"):
        needs.chromium()
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n", encoding="utf-8")
    browser.chmod(0o755)
    monkeypatch.setenv("SLIDEGEN_CHROMIUM", str(browser))
    monkeypatch.setattr(pdf, "require_playwright", lambda: None)
    assert needs.chromium() == browser


def test_module_and_file(local: None, tmp_path: Path) -> None:
    assert needs.module("json", "stdlib").dumps([1]) == "[1]"
    with pytest.raises(pytest.skip.Exception, match=r"^Python package no_such_module_here is not installed \(pip x\)$"):
        needs.module("no_such_module_here", "pip x")
    with pytest.raises(pytest.skip.Exception, match="marp not found: run `npm ci`$"):
        needs.file(tmp_path / "marp", "run `npm ci`")
    (tmp_path / "marp").touch()
    assert needs.file(tmp_path / "marp", "run `npm ci`") == tmp_path / "marp"
