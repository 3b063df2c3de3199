"""The book build's notebook execution: a notebook whose cached outputs hold stderr runs again in the build."""

import logging
from types import SimpleNamespace

import nbformat

from multigpu.book import build


class _Cache:
    """The part of a jupyter-cache the build reads: records, their notebooks, and removal."""

    def __init__(self, notebooks: dict[str, nbformat.NotebookNode]) -> None:
        self.notebooks = dict(enumerate(notebooks.items()))
        self.removed: list[int] = []

    def list_cache_records(self):
        return [SimpleNamespace(pk=pk, uri=uri) for pk, (uri, _nb) in self.notebooks.items()]

    def get_cache_bundle(self, pk: int):
        return SimpleNamespace(nb=self.notebooks[pk][1])

    def remove_cache(self, pk: int) -> None:
        self.removed.append(pk)


def _notebook(*outputs: dict) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    return nb


def test_a_notebook_with_stderr_in_its_cached_outputs_leaves_the_cache():
    """A kernel that lost a port race prints its error into a cell of a notebook that ran correctly; that
    notebook is taken out of the cache (the English build runs it again), the others stay."""
    clean = _notebook({"output_type": "stream", "name": "stdout", "text": "ok\n"})
    raced = _notebook({"output_type": "stream", "name": "stderr", "text": "zmq.error.ZMQError: Address in use\n"})
    cache = _Cache({"a.ipynb": clean, "b.ipynb": raced})
    assert build.drop_stderr(cache, logging.getLogger("test")) == ["b.ipynb"]
    assert cache.removed == [1]


def test_stored_outputs_build_runs_no_notebook_and_renders_the_committed_outputs(monkeypatch, tmp_path):
    """``--stored-outputs`` (what ``make test`` builds after nbval) executes nothing: no jupyter-cache run, and
    each edition's Jupyter Book configuration turns execution off; a failed edition leaves the site alone."""
    import subprocess

    import yaml

    def no_run():
        raise AssertionError("a stored-outputs build must not execute the notebooks")

    configs = []

    def fake_jupyter_book(command, cwd):
        configs.append(yaml.safe_load(open(command[command.index("--config") + 1], encoding="utf-8")))
        return SimpleNamespace(returncode=1)

    monkeypatch.setattr(build, "NEXT", tmp_path / ".next")
    monkeypatch.setattr(build, "SITE", tmp_path / "html")
    monkeypatch.setattr(build, "execute_notebooks", no_run)
    monkeypatch.setattr(subprocess, "run", fake_jupyter_book)
    assert build.build("jupyter-book", stored=True) == 1
    assert [c["execute"]["execute_notebooks"] for c in configs] == ["off"]
    assert not (tmp_path / "html").exists()
