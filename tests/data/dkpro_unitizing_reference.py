"""Record tests/data/dkpro_unitizing_reference.json: Krippendorff's unitizing alpha as DKPro Agreement computes it.

DKPro Agreement (https://github.com/dkpro/dkpro-statistics, Apache-2.0; commit f7f4f89136659c50f175ac8db7bfdfc3875b07db)
is Java: its unitizing classes are compiled with their dependencies' jars and run through the small driver
tests/data/dkpro/DkproUnitizingReference.java, which reads a study on stdin and prints DKPro's per-category and overall
observed and expected disagreement and alpha:

    git clone https://github.com/dkpro/dkpro-statistics /tmp/dkpro/src
    CP=slf4j-api-2.0.17.jar:commons-math3-3.6.1.jar:commons-lang3-3.7.jar   # from a Maven repository
    javac -cp $CP -d /tmp/dkpro/classes -sourcepath /tmp/dkpro/src/dkpro-statistics-agreement/src/main/java \\
        tests/data/dkpro/DkproUnitizingReference.java
    python tests/data/dkpro_unitizing_reference.py "/tmp/dkpro/classes:$CP" > tests/data/dkpro_unitizing_reference.json

The projects: 2 to 4 coders (every coder on every task), 1 to 3 tasks laid end to end on one continuum (INCEpTION's
convention, which DKPro's single continuum takes as given), three labels, one coder's units of one label never
overlapping (DKPro's walk assumes so).
"""

import json
import subprocess
import sys

import numpy as np


def project(rng: np.random.Generator, n_coders: int, lengths: list[int]) -> list[tuple[int, int, int, int, str]]:
    """Units (task, start, end, coder, label): a shared segmentation that each coder copies with noise."""
    units = []
    for task, length in enumerate(lengths):
        cuts = np.sort(rng.choice(np.arange(1, length), size=10, replace=False))
        truth = [(int(a), int(b), str(rng.choice(["A", "B", "C"]))) for a, b in zip(cuts[::2], cuts[1::2], strict=True)]
        for coder in range(n_coders):
            reach = {}
            for start, end, label in truth:
                if rng.random() < 0.2:
                    continue
                label = label if rng.random() < 0.8 else str(rng.choice(["A", "B", "C"]))
                start = max(reach.get(label, 0), start + int(rng.integers(-3, 4)))
                end = min(length, max(start + 1, end + int(rng.integers(-3, 4))))
                if start >= end:
                    continue
                units.append((task, start, end, coder, label))
                reach[label] = end
    return units


def dkpro(classpath: str, n_coders: int, lengths: list[int], units: list[tuple]) -> dict:
    offsets = np.r_[0, np.cumsum(lengths)[:-1]]
    lines = [f"{n_coders} 0 {sum(lengths)}"] + [f"{offsets[t] + s} {e - s} {c} {label}" for t, s, e, c, label in units]
    out = subprocess.run(["java", "-cp", classpath, "org.dkpro.statistics.agreement.unitizing.DkproUnitizingReference"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        name, observed, expected, alpha = line.split()
        result[name] = {"observed": float(observed), "expected": float(expected), "alpha": float(alpha)}
    return result


def main(classpath: str) -> dict:
    rng = np.random.default_rng(1995)
    cases = []
    for n_coders, lengths in [(2, [120]), (3, [100]), (4, [150]), (2, [60, 90]), (3, [80, 40, 70]), (4, [50, 100])]:
        units = project(rng, n_coders, lengths)
        cases.append({"coders": n_coders, "lengths": lengths, "units": [list(u) for u in units],
                      "dkpro": dkpro(classpath, n_coders, lengths, units)})
    return {"dkpro-statistics": "f7f4f89136659c50f175ac8db7bfdfc3875b07db", "cases": cases}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1]), indent=1))
