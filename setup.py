"""The package list, found: every folder below the repository root that holds an ``__init__.py``.

The repository keeps the design card's layout (domain/, ports/, ...) at its top
level; installed, every layer lives under the one import name ``culturebias``
(pyproject.toml maps ``culturebias`` to this folder). setuptools' own package
discovery cannot prefix what it finds with that name, so it is done here: a new
sub-package needs no edit anywhere. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

NOT_SHIPPED = ["tests", "tests.*", "perf", "perf.*", "scripts", "scripts.*", "features", "features.*", "build", "build.*"]


class BuildPy(build_py):
    """The root package's modules without this file (it is the build's, not culturebias.setup)."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if not (package == "culturebias" and m[1] == "setup")]


setup(
    packages=["culturebias", *(f"culturebias.{name}" for name in find_packages(".", exclude=NOT_SHIPPED))],
    cmdclass={"build_py": BuildPy},
)
