"""Record tests/data/irrcac_reference.json: Gwet's AC1/AC2 and Fleiss' kappa as the irrCAC package computes them.

irrCAC pins an old toolchain (coverage<7, its own scipy) and cannot share the test environment, so its values are
recorded here, with the command that made them:

    python3 -m venv /tmp/irrcac-venv && /tmp/irrcac-venv/bin/pip install irrCAC==0.4.4 pandas
    /tmp/irrcac-venv/bin/python tests/data/irrcac_reference.py > tests/data/irrcac_reference.json

irrCAC rounds its coefficients and standard errors to 5 decimals.
"""

import json

import numpy as np
import pandas as pd
from irrCAC import datasets
from irrCAC.raw import CAC

WEIGHTS = ("identity", "quadratic", "linear", "ordinal", "ratio")


def record(frame: pd.DataFrame, categories: list[float]) -> dict:
    out = {"ratings": frame.fillna(-1).to_numpy().tolist(), "categories": categories}
    for weights in WEIGHTS:
        cac = CAC(frame, weights=weights, categories=categories)
        gwet, fleiss = cac.gwet()["est"], cac.fleiss()["est"]
        out[weights] = {name: {"value": est["coefficient_value"], "se": est["se"], "pa": est["pa"], "pe": est["pe"],
                               "interval": list(est["confidence_interval"])}
                        for name, est in (("gwet", gwet), ("fleiss", fleiss))}
    return out


def main() -> None:
    rng = np.random.default_rng(3)
    ratings = rng.integers(1, 5, size=(25, 4)).astype(float)
    ratings[rng.random((25, 4)) < 0.25] = np.nan  # missing ratings
    print(json.dumps({
        "irrCAC": "0.4.4",
        "random_4x25_missing": record(pd.DataFrame(ratings, columns=["r1", "r2", "r3", "r4"]), [1.0, 2.0, 3.0, 4.0]),
        "raw_4raters": record(datasets.raw_4raters(), [1.0, 2.0, 3.0, 4.0, 5.0]),
    }, indent=1))


if __name__ == "__main__":
    main()
