"""Both builds of toolscore: the compiled accelerator where it was built (every listed module,
none stale), the .py sources under TOOLSCORE_PURE_PYTHON=1, and an install on a machine
without a C compiler that falls back to them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib import import_module
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from click.testing import CliRunner

import toolscore
from toolscore.build import PURE_PYTHON, pure_python_forced
from toolscore.cli.app import cli

ROOT = Path(__file__).parents[2]
PACKAGE = Path(toolscore.__file__).parent
SUPPORT = ROOT / "examples" / "support"
COMPILED: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["toolscore"][
    "compiled"
]
MODULES = {
    ".".join(Path(source).relative_to("src").with_suffix("").parts).removesuffix(".__init__"): (
        PACKAGE.parent / Path(source).relative_to("src")
    )
    for source in COMPILED
}
"""Each module the accelerator compiles, by name, with its .py source where toolscore runs."""


def extension_beside(source: Path) -> Path | None:
    """The compiled extension built from `source`, when there is one beside it."""
    for suffix in EXTENSION_SUFFIXES:
        candidate = source.with_name(source.stem + suffix)
        if candidate.exists():
            return candidate
    return None


def built() -> dict[str, Path]:
    return {name: ext for name, source in MODULES.items() if (ext := extension_beside(source))}


def has_c_compiler() -> bool:
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(command.split()[0]) is not None


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without the variables that choose what toolscore loads."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", PURE_PYTHON)}
    return {**environment, **extra}


def test_every_listed_module_exists() -> None:
    for name, source in MODULES.items():
        assert source.is_file(), f"pyproject.toml lists {name}, which has no source {source}"


def test_no_compiled_module_stands_where_no_listed_source_is() -> None:
    """A module that moved leaves its compiled file behind, which would still import under
    the old name and hide the move: `make build` removes it (setup.py), and none is left."""
    listed = set(MODULES)
    orphans = [
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*")
        if path.name.endswith(tuple(EXTENSION_SUFFIXES))
        and ".".join(
            (*path.relative_to(PACKAGE.parent).parts[:-1], path.name.split(".")[0])
        ).removesuffix(".__init__")
        not in listed
    ]
    assert orphans == [], "compiled modules with no listed source; run `make build`"


def test_the_compiled_build_is_complete_and_loaded() -> None:
    extensions = built()
    if not extensions:
        if os.environ.get("CI") and has_c_compiler():
            pytest.fail("CI has a C compiler, so the install must have built the accelerator")
        pytest.skip("no compiled build here (no C compiler at install time)")
    assert sorted(extensions) == sorted(MODULES), "some listed modules did not compile"
    expected = "pure-python" if pure_python_forced() else "compiled"
    assert toolscore.build_kind() == expected
    for name, extension in extensions.items():
        spec = import_module(name).__spec__
        assert spec is not None
        origin = Path(str(spec.origin))
        assert origin == (MODULES[name] if pure_python_forced() else extension), name


def test_no_compiled_module_is_older_than_its_source() -> None:
    """In the source tree a module edited since its build would run its old compiled code."""
    if not PACKAGE.is_relative_to(ROOT / "src"):
        pytest.skip("toolscore is installed, not run from this source tree")
    stale = [
        name
        for name, extension in built().items()
        if extension.stat().st_mtime < MODULES[name].stat().st_mtime
    ]
    assert not stale, f"compiled modules older than their .py: {stale}; rebuild (`make build`)"


def test_pure_python_mode_loads_no_extension_module(tmp_path: Path) -> None:
    """Under TOOLSCORE_PURE_PYTHON=1 every toolscore module, the listed ones first, comes from
    its .py source, in a process that has scored a case and written its report."""
    report = tmp_path / "report.json"
    script = f"""
import json, sys
from importlib import import_module
from toolscore.cli.app import main
sys.argv = ["toolscore", "score", "--specs", {str(SUPPORT / "tools.yaml")!r},
            "--cases", {str(SUPPORT / "cases.jsonl")!r}, "--json", {str(report)!r},
            "--outputs", {str(SUPPORT / "outputs.jsonl")!r}, "--workers", "1"]
for name in {sorted(MODULES)!r}:
    import_module(name)
try:
    main()
except SystemExit:
    pass
import toolscore
origins = {{name: str(module.__spec__.origin) for name, module in sys.modules.items()
           if name.startswith("toolscore") and getattr(module, "__spec__", None)}}
print(json.dumps({{"kind": toolscore.build_kind(), "origins": origins}}))
"""
    environment = clean_environment(PYTHONPATH=str(PACKAGE.parent), **{PURE_PYTHON: "1"})
    done = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["kind"] == "pure-python"
    assert set(MODULES) <= set(seen["origins"])
    not_source = {name: origin for name, origin in seen["origins"].items() if origin[-3:] != ".py"}
    assert not not_source
    assert json.loads(report.read_text())["build"] == "pure-python"


def test_version_and_report_header_say_which_build_ran(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    version = CliRunner().invoke(cli, ["--version"])
    kind = toolscore.build_kind()
    assert version.stdout == f"toolscore, version {toolscore.__version__} ({kind})\n"
    CliRunner().invoke(cli, [
        "score", "--specs", str(SUPPORT / "tools.yaml"), "--cases", str(SUPPORT / "cases.jsonl"),
        "--outputs", str(SUPPORT / "outputs.jsonl"), "--json", str(report),
    ])  # fmt: skip
    assert json.loads(report.read_text())["build"] == kind


@pytest.mark.parametrize(
    ("asked", "warning"),
    [
        ({"CC": "/bin/false"}, "no working C compiler: the pure-Python modules will run"),
        ({"TOOLSCORE_BUILD": "pure-python"}, None),  # what `make demo` installs
    ],
    ids=["no-c-compiler", "pure-python-asked"],
)
def test_install_without_a_c_compiler_falls_back_to_pure_python(
    tmp_path: Path, asked: dict[str, str], warning: str | None
) -> None:
    """`pip install .` with CC=/bin/false, or with TOOLSCORE_BUILD=pure-python: the install
    succeeds, no extension is installed, and the CLI scores on the .py sources. Offline: the
    build runs on this environment's setuptools and Cython, and the fresh environment borrows
    this one's dependencies."""
    source = tmp_path / "source"
    for name in ("pyproject.toml", "setup.py", "README.md"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", symlinks=True, ignore=skip)
    shutil.copytree(ROOT / "examples", source / "examples", ignore=skip)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "borrowed.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    environment = clean_environment(PIP_NO_INDEX="1", **asked)
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-v",
         "--no-build-isolation", str(source)],
        check=False, env=environment, capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    if warning is None:
        assert "WARNING: toolscore" not in install.stderr  # nothing was even tried
    else:
        assert warning in install.stderr
    installed = site / "toolscore"
    assert not [path for path in installed.rglob("*") if path.suffix in (".so", ".pyd")]
    shipped = (
        "schemas/spec.schema.json",
        "schemas/cases.schema.json",
        "schemas/outputs.schema.json",
    )
    for relative in ("calibration/templates/case.html", "examples/support/env/tools.py", *shipped):
        assert (installed / relative).is_file(), relative
    kind = subprocess.run(
        [python, "-c", "import toolscore; print(toolscore.__file__, toolscore.build_kind())"],
        env=environment, capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.split()  # fmt: skip
    assert kind == [str(installed / "__init__.py"), "pure-python"]
    report = tmp_path / "report.json"
    scored = subprocess.run(
        [venv / "bin" / "toolscore", "score", "--specs", SUPPORT / "tools.yaml",
         "--cases", SUPPORT / "cases.jsonl", "--outputs", SUPPORT / "outputs.jsonl",
         "--json", report],
        check=False, env=environment, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert json.loads(report.read_text())["build"] == "pure-python"
    version = subprocess.run(
        [venv / "bin" / "toolscore", "--version"],
        env=environment, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert version.stdout == f"toolscore, version {toolscore.__version__} (pure-python)\n"


def test_an_unknown_build_is_refused_in_one_line() -> None:
    environment = clean_environment(TOOLSCORE_BUILD="fast")
    done = subprocess.run(
        [sys.executable, "setup.py", "--version"],
        cwd=ROOT, env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "toolscore: TOOLSCORE_BUILD='fast' is not a build: compiled or pure-python"
    )


def make_plan(folder: Path, target: str) -> list[str]:
    """The commands `make TARGET` would run in `folder` (`make -n`), one per line."""
    # Run under `make test`, make's own variables would make this make a sub-make, which
    # prints "Entering directory" lines among the commands.
    outside = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(
        ["make", "-n", target], cwd=folder, env=outside, capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_installs_the_runtime_only_and_make_test_the_dev_extras(
    tmp_path: Path,
) -> None:
    """`make demo` installs toolscore and its runtime dependencies, the pure-Python build,
    which is quick; a demo's .venv later used by `make test` gets the dev extras then (their
    own stamp); a dev install serves the demo as it is."""
    for name in ("Makefile", "pyproject.toml", "setup.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    installs = [line for line in make_plan(tmp_path, "demo") if "pip install" in line]
    assert installs == [
        ".venv/bin/python -m pip install --quiet --upgrade pip",
        "TOOLSCORE_BUILD=pure-python .venv/bin/python -m pip install --quiet -e .",
    ]
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    for made in (venv / "bin" / "python", venv / ".installed"):  # what `make demo` left
        made.touch()
    assert make_plan(tmp_path, "demo") == [".venv/bin/toolscore demo"]
    test = make_plan(tmp_path, "test")
    assert test[0] == ".venv/bin/python -m pip install --quiet -e '.[dev]'"
    assert ".venv/bin/python -m pytest" in test
    (venv / ".installed-dev").touch()  # what `make test` left
    assert make_plan(tmp_path, "demo") == [".venv/bin/toolscore demo"]
    assert not [line for line in make_plan(tmp_path, "test") if "pip install" in line]
