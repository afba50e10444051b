"""Installs ws_solver_autoload.pth next to the package, in wheels and in editable installs
(``pip install .`` and ``pip install -e .``); everything else is in pyproject.toml.

The .pth line switches ws_solver on when $WS_SOLVER is set (ws_solver/autoload.py,
docs/torch-compile.md); with it unset the line reads os.environ and does nothing else.
"""

from __future__ import annotations

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "ws_solver_autoload.pth"
HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithPth(build_py):
    """A wheel's root is site-packages: the .pth goes there, next to ws_solver/."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:  # an editable wheel gets it from EditableWheelWithPth
            self.copy_file(os.path.join(HERE, PTH), os.path.join(self.build_lib, PTH))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        return [*outputs, os.path.join(self.build_lib, PTH)]


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
