"""Start-up: ``ls-agreement`` and ``import agreement`` load no heavy library before a command needs it.

Each check runs in a fresh interpreter (this one has long imported everything). What a command needs (SciPy's
solvers, the SDK, the service, the plots) is imported by the command or the measure that uses it; the package's
measures are imported when first read (``agreement.__getattr__``). No timing here: the modules loaded say it.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("scipy.stats", "scipy.optimize", "scipy.sparse", "matplotlib", "fastapi", "uvicorn", "label_studio_sdk",
         "shapely")


def _run(program: str) -> dict:
    """The JSON ``program`` prints last, run by a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _loaded_after(statement: str) -> list[str]:
    return _run(f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))")


@pytest.mark.parametrize("statement", ["import plugin.cli", "import agreement",
                                       "from agreement import krippendorff_alpha, spa, fleiss_kappa, gwet_ac",
                                       "from plugin.cli import build_parser; build_parser()"])
def test_the_command_and_the_package_load_no_heavy_library(statement):
    loaded = set(_loaded_after(statement))
    assert not {name for name in HEAVY if name in loaded}


def test_a_measure_that_needs_scipy_still_gets_it():
    loaded = set(_loaded_after("from agreement import best_alignment"))
    assert "scipy.optimize" in loaded


def test_ls_agreement_help_exits_0():
    script = Path(sys.executable).with_name("ls-agreement")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "plugin"]
    for args in (["--help"], ["compute", "--help"]):
        done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("usage:")


def test_every_export_is_there_before_and_after_its_module_is_imported():
    # a measure named as its module (agreement.gamma, .span_f1, .spa) is the function, even once the module is
    # imported by its dotted path, first or after
    program = """
import importlib, inspect, json, sys
import agreement.gamma
import agreement
from agreement import gamma
first = inspect.isfunction(gamma) and agreement.gamma is gamma
importlib.import_module("agreement.span_f1")
from agreement import span_f1, spa
import agreement.spa
same = all(inspect.isfunction(getattr(agreement, name)) for name in ("gamma", "span_f1", "spa"))
modules = all(inspect.ismodule(sys.modules[f"agreement.{name}"]) for name in ("gamma", "span_f1", "spa"))
listed = set(agreement.__all__) <= set(dir(agreement))
every = all(getattr(agreement, name).__module__.startswith("agreement.") for name in agreement.__all__)
print(json.dumps([first, same, modules, listed, every]))
"""
    assert _run(program) == [True, True, True, True, True]


def test_an_unknown_name_is_an_attribute_error():
    program = """
import json
import agreement
try:
    agreement.no_such_measure
except AttributeError as error:
    print(json.dumps(str(error)))
"""
    assert "no_such_measure" in _run(program)


def test_the_lazy_exports_the_type_checking_imports_and_all_name_the_same_measures():
    import ast

    import agreement

    tree = ast.parse(Path(agreement.__file__).read_text())
    checked = next(node for node in tree.body if isinstance(node, ast.If))  # the `if TYPE_CHECKING:` block
    imported = {(node.module.removeprefix("agreement."), alias.name)
                for node in checked.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    lazy = {(module, name) for module, names in agreement._EXPORTS.items() for name in names}
    assert imported == lazy
    assert sorted(name for _, name in lazy) == agreement.__all__
