"""How a measure says that it is undefined: NaN, and a warning that says why and points at the caller."""

import inspect
import math
import warnings

import pytest

from agreement.undefined import UndefinedMeasureWarning, warn_undefined


def a_measure():
    return warn_undefined("Scott's pi", "there are fewer than two categories")


def test_warn_undefined_returns_nan_with_the_reason():
    with pytest.warns(UndefinedMeasureWarning) as caught:
        value = warn_undefined("Fleiss' kappa", "no item has two annotations")
    assert math.isnan(value)
    expected = "Fleiss' kappa is undefined: no item has two annotations."
    assert [str(w.message) for w in caught] == [expected]


def test_the_warning_points_at_the_code_that_called_the_measure():
    # stacklevel 3: past warn_undefined and past the measure (a_measure), to the line that asked for the measure
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        called_at = inspect.currentframe().f_lineno + 1
        value = a_measure()
    assert math.isnan(value)
    assert (caught[0].filename, caught[0].lineno) == (__file__, called_at)


def test_the_warning_is_a_user_warning_filters_can_silence():
    assert issubclass(UndefinedMeasureWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        assert math.isnan(a_measure())
