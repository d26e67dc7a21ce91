"""Record tests/data/unitized_alpha_reference.json: uα as the PyPI package krippendorff-unitized-alpha computes it.

krippendorff-unitized-alpha 0.1.0 (Zeljko Bekcic; Krippendorff, Mathet, Bouvry & Widlöcher 2016) lives in a venv of
its own:

    python3 -m venv .venv-peers/kua && .venv-peers/kua/bin/pip install krippendorff-unitized-alpha==0.1.0
    .venv-peers/kua/bin/python tests/data/unitized_alpha_reference.py > tests/data/unitized_alpha_reference.json

Its ``KrippendorffUnitizedAlpha`` takes each coder's segments, units and blanks, covering the continuum. The blanks are
written here as half-open ``[start, end)`` stretches between the units: the package's ``impute_empty_segments``
leaves one position out before and after every unit (it treats ``end`` as inclusive while ``Segment.length`` is
``end - start``), so it is not used. One continuum per input; units of one coder do not overlap.
"""

import json

import numpy as np
from krippendorff_unitized_alpha.krippendorffs_unitized_alpha import EMPTY_TAG, KrippendorffUnitizedAlpha, Segment


def segments(units: list[tuple[int, int, str]], length: int) -> list[Segment]:
    out, position = [], 0
    for start, end, label in sorted(units):
        if start > position:
            out.append(Segment(EMPTY_TAG, position, start))
        out.append(Segment(label, start, end))
        position = end
    if position < length:
        out.append(Segment(EMPTY_TAG, position, length))
    return out


def record(coders: dict[str, list[tuple[int, int, str]]], length: int) -> dict:
    alpha = KrippendorffUnitizedAlpha({coder: segments(units, length) for coder, units in coders.items()})
    return {"length": length, "coders": {coder: [list(u) for u in units] for coder, units in coders.items()},
            "u_alpha": float(alpha.result)}


def random_coders(rng: np.random.Generator, n_coders: int, length: int) -> dict[str, list[tuple[int, int, str]]]:
    """Coders who mostly copy one segmentation, moving boundaries, dropping units and changing labels."""
    cuts = np.sort(rng.choice(np.arange(1, length), size=12, replace=False))
    truth = [(int(a), int(b), str(rng.choice(["A", "B", "C"]))) for a, b in zip(cuts[::2], cuts[1::2], strict=True)]
    coders = {}
    for i in range(n_coders):
        units, position = [], 0
        for start, end, label in truth:
            if rng.random() < 0.15:
                continue
            start = max(position, start + int(rng.integers(-2, 3)))
            end = max(start + 1, end + int(rng.integers(-2, 3)))
            if end > length:
                continue
            units.append((start, end, label if rng.random() < 0.85 else str(rng.choice(["A", "B", "C"]))))
            position = end
        coders[f"coder{i}"] = units
    return coders


def main() -> dict:
    # Krippendorff (2004), Content Analysis 2nd ed., p. 254, as DKPro Agreement's Krippendorff2004Test writes it
    # (continuum [150, 450), shifted here to [0, 300)): observer i and observer j, categories c and k.
    krippendorff_2004 = {
        "i": [(225 - 150, 295 - 150, "c"), (370 - 150, 400 - 150, "c"), (180 - 150, 240 - 150, "k"),
              (300 - 150, 350 - 150, "k")],
        "j": [(220 - 150, 300 - 150, "c"), (355 - 150, 375 - 150, "c"), (400 - 150, 420 - 150, "c"),
              (180 - 150, 240 - 150, "k"), (300 - 150, 350 - 150, "k")],
    }
    # DKPro's two k units and the c units overlap ([180, 240) k and [225, 295) c for observer i): allowed in the
    # 1995 form, where each label is its own continuum, and counted twice at those positions by uα.
    rng = np.random.default_rng(2016)
    out = {"package": "krippendorff-unitized-alpha 0.1.0", "krippendorff_2004": record(krippendorff_2004, 300),
           "random": [record(random_coders(rng, n, 80), 80) for n in (2, 3, 4, 3, 2, 4)]}
    return out


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
