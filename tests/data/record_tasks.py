"""Record tests/data/all_tags_tasks.json from a running Label Studio.

Creates a project whose config has the text tags this project maps, signs up
three annotators, posts their annotations (and one skipped one), marks the
first annotator's annotation of the first task as ground truth as a reviewer
does, imports the third task with an annotation (which Label Studio marks as
ground truth), and saves the tasks exactly as ``tasks.list(fields="all")``
returns them. Region tags: tests/data/record_regions.py. Run against a throwaway server:

    python tests/data/record_tasks.py http://127.0.0.1:8080 <admin legacy token>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import requests
from label_studio_sdk import LabelStudio

CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Choices name="sentiment" toName="text" choice="single">
    <Choice value="positive"/><Choice value="negative"/><Choice value="neutral"/>
  </Choices>
  <Choices name="topics" toName="text" choice="multiple">
    <Choice value="sports"/><Choice value="politics"/><Choice value="tech"/>
  </Choices>
  <Labels name="ner" toName="text"><Label value="PER"/><Label value="ORG"/><Label value="LOC"/></Labels>
  <Rating name="quality" toName="text" maxRating="5"/>
  <Number name="score" toName="text" min="0" max="100"/>
  <Taxonomy name="taxonomy" toName="text">
    <Choice value="Animals"><Choice value="Mammals"/><Choice value="Birds"/></Choice>
    <Choice value="Plants"/>
  </Taxonomy>
  <TextArea name="summary" toName="text"/>
  <HyperText name="html" value="$html"/>
  <HyperTextLabels name="html_ner" toName="html"><Label value="PER"/><Label value="ORG"/></HyperTextLabels>
  <Paragraphs name="dialogue" value="$dialogue" layout="dialogue"/>
  <ParagraphLabels name="dialogue_act" toName="dialogue"><Label value="question"/><Label value="answer"/></ParagraphLabels>
  <Image name="image" value="$image"/>
  <RectangleLabels name="objects" toName="image"><Label value="car"/><Label value="person"/></RectangleLabels>
  <Text name="left" value="$left"/><Text name="right" value="$right"/>
  <Pairwise name="preference" toName="left,right"/>
</View>"""

DIALOGUE = [{"author": "A", "text": "Where is it?"}, {"author": "B", "text": "In Paris."}]
TASK_DATA = {"text": "Alice works at Acme in Paris.", "html": "<p>Alice works at <b>Acme</b></p>",
             "dialogue": DIALOGUE, "image": "/static/images/logo.png", "left": "first", "right": "second"}


def choice(name, values):
    return {"from_name": name, "to_name": "text", "type": "choices", "value": {"choices": values}}


def span(start, end, text, label, name="ner"):
    return {"from_name": name, "to_name": "text", "type": "labels",
            "value": {"start": start, "end": end, "text": text, "labels": [label]}}


def html_span(label, offset):
    return {"from_name": "html_ner", "to_name": "html", "type": "hypertextlabels",
            "value": {"start": "/p[1]/text()[1]", "end": "/p[1]/text()[1]", "startOffset": offset,
                      "endOffset": offset + 5, "globalOffsets": {"start": offset, "end": offset + 5},
                      "text": "Alice", "hypertextlabels": [label]}}


def paragraph(label, index):
    return {"from_name": "dialogue_act", "to_name": "dialogue", "type": "paragraphlabels",
            "value": {"start": str(index), "end": str(index), "startOffset": 0, "endOffset": 5, "text": "Where",
                      "paragraphlabels": [label]}}


def box(x, label):
    return {"from_name": "objects", "to_name": "image", "type": "rectanglelabels", "original_width": 200,
            "original_height": 100, "image_rotation": 0,
            "value": {"x": x, "y": 10.0, "width": 30.0, "height": 40.0, "rotation": 0, "rectanglelabels": [label]}}


def results(who: int, task: int) -> list[dict]:
    """Annotator ``who``'s results on task ``task``: agreements and disagreements of every kind."""
    sentiment = [["positive"], ["positive"], ["negative"]][who] if task == 0 else [["neutral"], ["negative"],
                                                                                   ["negative"]][who]
    topics = [["sports", "politics"], ["politics", "sports"], ["sports"]][who]
    out = [
        choice("sentiment", sentiment),
        choice("topics", topics),
        span(0, 5, "Alice", "PER"),
        span(15, 19, "Acme", ["ORG", "ORG", "LOC"][who]),
        {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": [4, 5, 4][who]}},
        {"from_name": "score", "to_name": "text", "type": "number", "value": {"number": [70.0, 72.5, 90.0][who]}},
        {"from_name": "taxonomy", "to_name": "text", "type": "taxonomy",
         "value": {"taxonomy": [[["Animals", "Mammals"]], [["Animals", "Mammals"]], [["Plants"]]][who]}},
        {"from_name": "summary", "to_name": "text", "type": "textarea",
         "value": {"text": [["Alice works at Acme."], ["alice works  at acme."], ["About Paris"]][who]}},
        html_span(["PER", "PER", "ORG"][who], 0),
        paragraph(["question", "question", "answer"][who], 0),
        box([10.0, 11.0, 60.0][who], "car"),
        {"from_name": "preference", "to_name": "left,right", "type": "pairwise",
         "value": {"selected": ["left", "left", "right"][who]}},
    ]
    if who == 0 and task == 0:
        out.append(span(23, 28, "Paris", "LOC"))  # a span only the first annotator marked
    return out


def signup(url: str, email: str) -> str:
    session = requests.Session()
    session.get(f"{url}/user/signup/")
    session.post(f"{url}/user/signup/", data={"email": email, "password": "annotator-pass-1",
                                              "csrfmiddlewaretoken": session.cookies["csrftoken"]},
                 headers={"Referer": f"{url}/user/signup/"})
    return session.get(f"{url}/api/current-user/token").json()["token"]


def main(url: str, token: str) -> None:
    admin = LabelStudio(base_url=url, api_key=token)
    project = admin.projects.create(title="all tags", label_config=CONFIG)
    imported = [{"result": [choice("sentiment", ["neutral"])]}]  # marked ground truth by Label Studio on import
    admin.projects.import_tasks(id=project.id, request=[
        {"data": TASK_DATA, "meta": {"batch": i}, **({"annotations": imported} if i == 2 else {})} for i in range(3)])
    tasks = sorted(t.id for t in admin.tasks.list(project=project.id, page_size=100))
    suffix = project.id
    for who in range(3):
        client = LabelStudio(base_url=url, api_key=signup(url, f"recorder{who}.{suffix}@example.com"))
        for index, task in enumerate(tasks[:2]):
            client.annotations.create(id=task, result=results(who, index))
        if who == 2:
            client.annotations.create(id=tasks[2], result=[], was_cancelled=True)
    first = min(a.id for a in admin.annotations.list(id=tasks[0]))  # the first annotator's, as a reviewer would
    admin.annotations.update(id=first, ground_truth=True)
    dumped = [t.model_dump(mode="json") for t in admin.tasks.list(project=project.id, page_size=100)]
    target = Path(__file__).with_name("all_tags_tasks.json")
    target.write_text(json.dumps({"label_config": CONFIG, "tasks": dumped}, indent=1) + "\n")
    print(f"wrote {target} ({len(dumped)} tasks)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
