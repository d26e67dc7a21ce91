"""Convert bratiaa's example brat project into a Label Studio JSON export: tests/data/bratiaa/export.json.

The project is example-files/example-project of https://github.com/kldtz/bratiaa (MIT licence; the texts are
CoNLL-2002 Spanish training documents from the EFE news agency, converted to brat standoff by brat's
conll02tostandoff.py). Every annotator directory holds the same seven texts; each becomes one task with
``data.text``, and each annotator's .ann file one annotation (``completed_by`` the annotator's number, its name in
``completed_by_name``) whose results are Label Studio Labels regions. brat's offsets are character offsets into the
.txt file, as Label Studio's ``start``/``end`` are into ``data.text``. The example has no discontinuous spans.

    git clone /path/to/bratiaa /tmp/bratiaa_src
    python tests/data/bratiaa_to_label_studio.py /tmp/bratiaa_src/example-files/example-project \
        > tests/data/bratiaa/export.json
"""

import json
import sys
from pathlib import Path


def regions(ann: Path, text: str) -> list[dict]:
    out = []
    for line in ann.read_text(encoding="utf-8").splitlines():
        if not line.startswith("T"):
            continue
        ident, span, surface = line.split("\t")
        label, start, end = span.split(" ")
        start, end = int(start), int(end)
        if text[start:end] != surface:
            raise ValueError(f"{ann}: {ident} does not cover its text.")
        out.append({"id": f"{ann.stem}-{ident}", "from_name": "label", "to_name": "text", "type": "labels",
                    "value": {"start": start, "end": end, "text": surface, "labels": [label]}})
    return out


def main(root: Path) -> list[dict]:
    annotators = sorted(p.name for p in root.iterdir() if p.is_dir())
    documents = sorted(p.name for p in (root / annotators[0]).glob("*.txt"))
    tasks = []
    for task_id, name in enumerate(documents, start=1):
        text = (root / annotators[0] / name).read_text(encoding="utf-8")
        annotations = []
        for number, annotator in enumerate(annotators, start=1):
            if (root / annotator / name).read_text(encoding="utf-8") != text:
                raise ValueError(f"{annotator}'s copy of {name} differs.")
            annotations.append({"id": task_id * 10 + number, "completed_by": number, "completed_by_name": annotator,
                                "result": regions(root / annotator / name.replace(".txt", ".ann"), text)})
        tasks.append({"id": task_id, "data": {"text": text, "document": name.replace(".txt", ".ann")},
                      "annotations": annotations})
    return tasks


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), ensure_ascii=False, indent=1))
