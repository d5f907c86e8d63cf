"""The optional compiled accelerator: the modules listed under `[tool.toolscore] compiled` in
pyproject.toml, compiled by Cython from the same .py sources (pure-Python mode) into extension
modules installed beside them. Everything else about the package is in pyproject.toml.

A machine without Cython or a C compiler still builds and installs: every module that fails to
translate or compile is left out with a warning, and its .py runs as it is (`toolscore
--version` says which build scored). `TOOLSCORE_BUILD=pure-python` asks for that build
outright: nothing is compiled (`make demo` installs it, in seconds rather than minutes);
`TOOLSCORE_BUILD=compiled`, the default, compiles what it can.
"""

from __future__ import annotations

import os
import sys
import tempfile
import tomllib
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent
DIRECTIVES = {
    "language_level": 3,
    "binding": True,  # functions keep their signatures, defaults and pickling by name
    "annotation_typing": False,  # type hints stay hints: never enforced as C types
    "infer_types": False,  # no variable becomes a C type behind the code's back
    "cdivision": False,  # division and modulo by zero raise as in Python
    "cpow": False,  # ** gives what Python gives
    "c_api_binop_methods": False,  # operators dispatch as in Python
    "emit_code_comments": False,  # smaller .c files; they are build artefacts
}
"""Compiler directives that keep Python's semantics exactly: the compiled module must behave
as its source does, only faster."""


BUILDS = ("compiled", "pure-python")
"""The values of TOOLSCORE_BUILD, the build to make (the names `toolscore --version` gives)."""


def compiled_modules() -> list[str]:
    """The source files to compile, relative to the project root (pyproject.toml); none for
    the pure-Python build."""
    build = os.environ.get("TOOLSCORE_BUILD", "").strip() or BUILDS[0]
    if build not in BUILDS:
        sys.exit(f"toolscore: TOOLSCORE_BUILD={build!r} is not a build: {' or '.join(BUILDS)}")
    if build == "pure-python":
        return []
    with (ROOT / "pyproject.toml").open("rb") as file:
        modules: list[str] = tomllib.load(file)["tool"]["toolscore"]["compiled"]
    return modules


def extension(source: str) -> Extension:
    """The extension module compiled from `src/toolscore/x/y.py`: `toolscore.x.y`."""
    name = ".".join(Path(source).relative_to("src").with_suffix("").parts)
    return Extension(name, [source])


def remove_orphans() -> None:
    """Delete each compiled module in the source tree that pyproject.toml no longer lists (a
    module moved or removed): left in place, it would still import under a name that has no
    source, and shadow the move."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        listed = {
            extension(source).name for source in tomllib.load(file)["tool"]["toolscore"]["compiled"]
        }
    for built in (ROOT / "src" / "toolscore").rglob("*"):
        if not built.name.endswith(tuple(EXTENSION_SUFFIXES)):
            continue
        folders = built.relative_to(ROOT / "src").parts[:-1]
        if ".".join((*folders, built.name.split(".", 1)[0])) not in listed:
            built.unlink()
            warn(f"removed {built.relative_to(ROOT)}: pyproject.toml lists no such module")


def warn(message: str) -> None:
    print(f"WARNING: toolscore: {message}", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """Translate each listed module with Cython, then compile it; a module whose translation
    or compilation fails is dropped with a warning, and its .py stays the one that runs."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:  # compile on every core unless told otherwise (-j)
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        if self.inplace:
            remove_orphans()
        if self.inplace and not self.force:  # `--inplace`, editable installs: only what changed
            self.extensions = [ext for ext in self.extensions if not self.up_to_date(ext)]
        super().run()

    def up_to_date(self, ext: Extension) -> bool:
        """Whether the extension beside the source is newer than the source."""
        built = Path(self.get_ext_fullpath(ext.name))
        return built.exists() and built.stat().st_mtime >= Path(ext.sources[0]).stat().st_mtime

    def build_extensions(self) -> None:
        try:
            from Cython.Build import cythonize  # noqa: PLC0415 - Cython is optional
        except ImportError:
            warn("Cython is not installed: the pure-Python modules will run")
            self.extensions = []
            return
        if not self.compiler_works():
            warn("no working C compiler: the pure-Python modules will run")
            self.extensions = []
            return
        translated = []
        for ext in self.extensions:
            try:
                (c_module,) = cythonize(
                    [Extension(ext.name, ext.sources)],
                    build_dir=os.path.join(self.build_temp, "cython"),
                    compiler_directives=DIRECTIVES,
                    force=self.force,
                    quiet=True,
                )
            except Exception as error:  # any failure of one module must not fail the install
                warn(f"{ext.name} not compiled (Cython: {error}); its .py will run")
                continue
            ext.sources = c_module.sources  # the generated .c file
            translated.append(ext)
        self.extensions = translated
        self.failed: list[Extension] = []
        super().build_extensions()
        # An extension that did not build has no file to copy beside its source (--inplace).
        self.extensions = [ext for ext in self.extensions if ext not in self.failed]

    def compiler_works(self) -> bool:
        """Whether the C compiler builds a file that includes Python.h: tried once, so that a
        machine without one learns it at once, not after every module has been translated."""
        with tempfile.TemporaryDirectory() as folder:
            probe = Path(folder, "probe.c")
            probe.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
            try:
                self.compiler.compile([str(probe)], output_dir=folder)
            except Exception:
                return False
        return True

    def build_extension(self, ext: Extension) -> None:
        if self.compiler.compiler_type == "unix":
            ext.extra_compile_args = [*ext.extra_compile_args, "-g0"]  # no debug info: 6x smaller
        try:
            super().build_extension(ext)
        except Exception as error:  # no compiler, no Python headers, a compiler error...
            warn(f"{ext.name} not compiled ({error}); its .py will run")
            self.failed.append(ext)

    def get_outputs(self) -> list[str]:
        built: list[str] = super().get_outputs()
        return [path for path in built if os.path.exists(path)]


setup(
    ext_modules=[extension(source) for source in compiled_modules()],
    cmdclass={"build_ext": OptionalBuildExt},
)
