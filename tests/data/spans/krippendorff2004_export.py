"""Write tests/data/spans/krippendorff2004.json: Krippendorff's 2004 unitizing example as a Label Studio export.

Krippendorff, K. (2004). *Content Analysis: An Introduction to Its
Methodology*, 2nd ed., p. 254: two observers unitize a continuum of 300
positions that begins at 150 into categories ``c`` and ``k``. The units
(begin, length) are as DKPro Agreement transcribes them in its test
``Krippendorff2004Test.createExample`` (``new UnitizingAnnotationStudy(2,
150, 300)``, dkpro/dkpro-statistics, Apache-2.0). Here the continuum is one
text task of exactly 300 characters, so every offset is the book's position
minus 150, and each observer is one annotation of Labels results on ``text``.

Run ``python tests/data/spans/krippendorff2004_export.py``; it rewrites the
export and its config beside this script.
"""

from __future__ import annotations

import json
from pathlib import Path

BEGIN, LENGTH = 150, 300  # the continuum, in the book's positions
# (observer, category, begin, length) in the book's positions; observer 1 is i, 2 is j.
UNITS = (
    (1, "c", 225, 70), (1, "c", 370, 30), (1, "k", 180, 60), (1, "k", 300, 50),
    (2, "c", 220, 80), (2, "c", 355, 20), (2, "c", 400, 20), (2, "k", 180, 60), (2, "k", 300, 50),
)
# 300 characters whose digits tell the offset (position 150 is the text's "0" at offset 0).
TEXT = ("0123456789" * (LENGTH // 10))[:LENGTH]
CONFIG = """<View>
  <Labels name="label" toName="text">
    <Label value="c"/>
    <Label value="k"/>
  </Labels>
  <Text name="text" value="$text"/>
</View>
"""


def export() -> list[dict]:
    """The one task, annotated by observers 1 (i) and 2 (j)."""
    annotations = []
    for observer in (1, 2):
        result = []
        for number, (who, category, begin, length) in enumerate(u for u in UNITS if u[0] == observer):
            start, end = begin - BEGIN, begin - BEGIN + length
            result.append({"id": f"o{observer}u{number}", "from_name": "label", "to_name": "text", "type": "labels",
                           "origin": "manual",
                           "value": {"start": start, "end": end, "text": TEXT[start:end], "labels": [category]}})
        annotations.append({"id": observer, "completed_by": observer, "result": result, "was_cancelled": False,
                            "ground_truth": False, "task": 1})
    return [{"id": 1, "data": {"text": TEXT}, "annotations": annotations}]


def main() -> None:
    here = Path(__file__).resolve().parent
    (here / "krippendorff2004.json").write_text(json.dumps(export(), indent=1) + "\n")
    (here / "krippendorff2004_config.xml").write_text(CONFIG)


if __name__ == "__main__":
    main()
