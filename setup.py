"""Installs ws_solver_autoload.pth next to the package, in wheels and in editable installs
(``pip install .`` and ``pip install -e .``), and puts the bundled corpus in wheels;
everything else is in pyproject.toml.

The .pth line switches ws_solver on when $WS_SOLVER is set (ws_solver/autoload.py,
docs/torch-compile.md); with it unset the line reads os.environ and does nothing else.

The bundled corpus (corpus/ttgir*/: the TTGIR dumps and their index.json, which holds the
stock records) is copied into the wheel as ws_solver/data/corpus/ttgir*/, where
``ws-solver demo`` finds it once installed (ws_solver/cli/demo.py). The repository keeps one
copy, in corpus/; an editable install reads it there.
"""

from __future__ import annotations

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "ws_solver_autoload.pth"
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS_IN_WHEEL = ("ws_solver", "data", "corpus")  # ws_solver/cli/demo.py reads it there


def corpus_files() -> list[tuple[str, str]]:
    """(source, path in the wheel) of each file of the bundled corpus: every corpus/ttgir*
    folder's .ttgir files and index.json. A source tree without them (an sdist that left
    them out) fails the build instead of making a wheel whose demo has nothing to run on."""
    folders = sorted(
        p for p in glob.glob(os.path.join(HERE, "corpus", "ttgir*")) if os.path.isdir(p)
    )
    files = []
    for folder in folders:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".ttgir") or n == "index.json")
        target = os.path.join(*CORPUS_IN_WHEEL, os.path.basename(folder))
        files += [(os.path.join(folder, n), os.path.join(target, n)) for n in names]
    if not any(source.endswith(".ttgir") for source, _ in files):
        raise RuntimeError("ws_solver: no corpus/ttgir*/*.ttgir to put in the wheel")
    return files


class BuildPyWithPth(build_py):
    """A wheel's root is site-packages: the .pth goes there, next to ws_solver/, and the
    bundled corpus under ws_solver/data/corpus/. An editable install gets the .pth from
    EditableWheelWithPth and reads the corpus in the checkout."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for source, target in self._extra_files():
            self.mkpath(os.path.dirname(os.path.join(self.build_lib, target)))
            self.copy_file(source, os.path.join(self.build_lib, target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        return [*outputs, *(os.path.join(self.build_lib, t) for _, t in self._extra_files())]

    @staticmethod
    def _extra_files() -> list[tuple[str, str]]:
        return [(os.path.join(HERE, PTH), PTH), *corpus_files()]


class EditableWheelWithPth(editable_wheel):
    """The editable wheel's files come from its unpacked folder, which setuptools (65 to 84
    at least) hands to ``_install_namespaces`` before packing it: the .pth is added there.
    If a later setuptools stops calling it, the build fails instead of leaving the .pth out."""

    def run(self) -> None:
        self._pth_added = False
        super().run()
        if not self._pth_added:
            raise RuntimeError(f"ws_solver: could not add {PTH} to the editable wheel")

    def _install_namespaces(self, installation_dir, pth_prefix):  # noqa: ANN001
        super()._install_namespaces(installation_dir, pth_prefix)
        shutil.copyfile(os.path.join(HERE, PTH), os.path.join(installation_dir, PTH))
        self._pth_added = True


setup(cmdclass={"build_py": BuildPyWithPth, "editable_wheel": EditableWheelWithPth})
