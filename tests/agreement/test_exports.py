"""The package's exports: every name in ``agreement.__all__`` is a measure, a result or an input, by its name."""

import importlib
import inspect
import types

import pytest

import agreement

SPAN_MEASURES = ("span_f1", "task_f1", "unitizing_alpha", "u_alpha", "gamma", "gamma_of", "task_gamma",
                 "task_gammas", "observed_disorder", "expected_disorder", "best_alignment", "Units", "units_from_frame")


@pytest.mark.parametrize("name", agreement.__all__)
def test_every_exported_name_is_importable_and_a_function_or_a_class(name):
    # what `from agreement import <name>` does: the package's attribute, else a submodule of that name
    value = getattr(importlib.__import__("agreement", fromlist=[name]), name)
    assert value is getattr(agreement, name)
    assert inspect.isfunction(value) or inspect.isclass(value), f"agreement.{name} is a {type(value).__name__}"
    assert value.__module__.startswith("agreement."), value.__module__


def test_all_is_sorted_and_names_everything_the_package_binds():
    assert agreement.__all__ == sorted(set(agreement.__all__))
    bound = {name for name in dir(agreement)
             if not name.startswith("_") and not isinstance(getattr(agreement, name), types.ModuleType)}
    assert bound == set(agreement.__all__)


def test_the_span_measures_are_exported():
    assert set(SPAN_MEASURES) <= set(agreement.__all__)


@pytest.mark.parametrize(("module", "left_out"), [("agreement.gamma", set()), ("agreement.unitizing", set()),
                                                  ("agreement.units", set()),
                                                  ("agreement.span_f1", {"candidate_pairs"})])
def test_the_span_modules_public_names_are_exported_but_their_helpers(module, left_out):
    public = set(importlib.import_module(module).__all__)
    assert public - left_out <= set(agreement.__all__)
    assert not left_out & set(agreement.__all__)


@pytest.mark.parametrize("name", ["spa", "span_f1", "gamma"])
def test_a_measure_named_as_its_module_is_the_function_and_the_module_stays_importable(name):
    # agreement.gamma is the measure; the module is reached by its dotted path, as every `from agreement.gamma
    # import ...` in the project does
    function = getattr(agreement, name)
    assert inspect.isfunction(function) and function.__module__ == f"agreement.{name}"
    module = importlib.import_module(f"agreement.{name}")
    assert isinstance(module, types.ModuleType)
    assert getattr(module, name) is function
    assert getattr(importlib.__import__(f"agreement.{name}", fromlist=[name]), name) is function
