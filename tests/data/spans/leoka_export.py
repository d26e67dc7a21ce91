"""Make tests/data/spans/leoka_team_N.json from the LEOKA_ML project's Label Studio export (see SOURCE.md).

Usage::

    git clone https://github.com/javierosorio/LEOKA_ML
    python tests/data/spans/leoka_export.py LEOKA_ML/3_annotations/annotations/LEOKA_team_1.json \
        tests/data/spans/leoka_team_1.json

The tasks, texts, results and annotation fields that scoring reads are kept
as exported; what identifies a person is removed: ``completed_by`` keeps the
user's numeric id only (the export has their e-mail address and name), and
``updated_by``, ``last_created_by``, ``reviews``, drafts and comment authors
are dropped. The labeling config is not in the repository: it is written
beside the export (``leoka_config.xml``) from the labels and taxonomy paths
the results use.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

TASK_FIELDS = ("id", "data", "meta", "created_at", "updated_at", "inner_id", "total_annotations",
               "cancelled_annotations", "project")
ANNOTATION_FIELDS = ("id", "result", "was_cancelled", "ground_truth", "created_at", "updated_at", "lead_time",
                     "last_action", "import_id", "task", "project")


def _annotation(annotation: dict) -> dict:
    out = {key: annotation[key] for key in ANNOTATION_FIELDS if key in annotation}
    user = annotation.get("completed_by")
    out["completed_by"] = user["id"] if isinstance(user, dict) else user
    return out


def reduced(tasks: list[dict]) -> list[dict]:
    """The export without what identifies the annotators."""
    return [{**{key: task[key] for key in TASK_FIELDS if key in task},
             "annotations": [_annotation(a) for a in task["annotations"]]} for task in tasks]


def config(tasks: list[dict]) -> str:
    """A labeling config with the labels and taxonomy paths the results use (names as in the results)."""
    labels: list[str] = []
    tree: dict[str, list[str]] = {}
    for task in tasks:
        for annotation in task["annotations"]:
            for result in annotation["result"]:
                if result["type"] == "labels":
                    labels.extend(label for label in result["value"]["labels"] if label not in labels)
                elif result["type"] == "taxonomy":
                    for path in result["value"]["taxonomy"]:
                        children = tree.setdefault(path[0], [])
                        children.extend(child for child in path[1:] if child not in children)
    lines = ["<View>", '  <Labels name="label" toName="text">']
    lines += [f"    <Label value={quoteattr(label)}/>" for label in sorted(labels)]
    lines += ["  </Labels>", '  <Text name="text" value="$text"/>', '  <Taxonomy name="Category" toName="text">']
    for parent in sorted(tree):
        lines.append(f"    <Choice value={quoteattr(parent)}>")
        lines += [f"      <Choice value={quoteattr(child)}/>" for child in sorted(tree[parent])]
        lines.append("    </Choice>")
    lines += ["  </Taxonomy>", "</View>", ""]
    return "\n".join(lines)


def main(source: str, target: str) -> None:
    tasks = json.loads(Path(source).read_text())
    out = reduced(tasks)
    Path(target).write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n")
    Path(target).with_name("leoka_config.xml").write_text(config(tasks))


if __name__ == "__main__":
    main(*sys.argv[1:3])
