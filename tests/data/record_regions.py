"""Record tests/data/region_tasks.json from a running Label Studio: results of every region family.

Creates a project whose config has the region tags (polygons, keypoints,
ellipses, brushes, the OCR template's Labels + Rectangle + per-region
TextArea, relations, video tracks, timelines, time series, audio spans) and
the task-level tags added with them (Ranker, DateTime, multi-path Taxonomy,
a Choice alias, a Repeater), signs up three annotators, posts their results,
and saves the tasks as ``tasks.list(fields="all")`` returns them. The same
functions build the project in tests/integration/test_regions.py. Run
against a throwaway server:

    python tests/data/record_regions.py http://127.0.0.1:8080 <admin legacy token>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from label_studio_sdk import LabelStudio
from label_studio_sdk.converter.brush import mask2rle

CONFIG = """<View>
  <Image name="image" value="$image"/>
  <PolygonLabels name="poly" toName="image"><Label value="cat"/><Label value="dog"/></PolygonLabels>
  <KeyPointLabels name="kp" toName="image"><Label value="eye"/><Label value="nose"/></KeyPointLabels>
  <EllipseLabels name="ell" toName="image"><Label value="ball"/></EllipseLabels>
  <BrushLabels name="brush" toName="image"><Label value="road"/><Label value="sky"/></BrushLabels>
  <Image name="ocr" value="$ocr"/>
  <Labels name="label" toName="ocr"><Label value="Text"/><Label value="Handwriting"/></Labels>
  <Rectangle name="bbox" toName="ocr"/>
  <TextArea name="transcription" toName="ocr" perRegion="true"/>
  <Relations><Relation value="next"/></Relations>
  <Video name="video" value="$video"/>
  <VideoRectangle name="track" toName="video"/>
  <Labels name="videoLabels" toName="video"><Label value="car"/></Labels>
  <TimelineLabels name="timeline" toName="video"><Label value="run"/><Label value="walk"/></TimelineLabels>
  <Audio name="audio" value="$audio"/>
  <Labels name="speaker" toName="audio"><Label value="A"/><Label value="B"/></Labels>
  <TimeSeries name="ts" valueType="json" value="$ts" timeColumn="time"><Channel column="value"/></TimeSeries>
  <TimeSeriesLabels name="events" toName="ts"><Label value="peak"/></TimeSeriesLabels>
  <Text name="text" value="$text"/>
  <Choices name="mood" toName="text"><Choice value="Happy mood" alias="happy"/><Choice value="Sad mood" alias="sad"/>
  </Choices>
  <Taxonomy name="topics" toName="text"><Choice value="Animals"><Choice value="Cats"/><Choice value="Dogs"/></Choice>
    <Choice value="Plants"/></Taxonomy>
  <DateTime name="when" toName="text" only="date"/>
  <List name="answers" value="$answers" title="Answers"/>
  <Ranker name="rank" toName="answers"/>
</View>"""

TASK_DATA = {"image": "/static/images/logo.png", "ocr": "/static/images/logo.png", "video": "/static/video.mp4",
             "audio": "/static/audio.wav", "ts": {"time": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], "value": list(range(10))},
             "text": "A short text.",
             "answers": [{"id": "x", "title": "X", "body": "x"}, {"id": "y", "title": "Y", "body": "y"},
                         {"id": "z", "title": "Z", "body": "z"}]}
SIZE = {"original_width": 120, "original_height": 80}


def _mask(x: int) -> list[int]:
    mask = np.zeros((80, 120), dtype=np.uint8)
    mask[10:40, x:x + 40] = 255
    return [int(v) for v in mask2rle(mask)]


def region(name: str, to_name: str, kind: str, value: dict, rid: str) -> dict:
    return {"id": rid, "from_name": name, "to_name": to_name, "type": kind, "value": value, **SIZE}


def results(who: int, task: int) -> list[dict]:
    """Annotator ``who``'s results on task ``task``: annotators 0 and 1 agree, 2 differs on every control."""
    same = who < 2
    shift = 0 if same else 40
    box = {"x": 10, "y": 10, "width": 20, "height": 10, "rotation": 0}  # same place: label and text differ
    out = [
        region("poly", "image", "polygonlabels",
               {"points": [[10, 10], [40, 10], [40, 40], [10, 40]], "closed": True,
                "polygonlabels": ["cat" if same else "dog"]}, f"p{who}"),
        region("kp", "image", "keypointlabels", {"x": 50 + (0.5 * who if same else 20), "y": 50, "width": 1,
                                                  "keypointlabels": ["eye"]}, f"k{who}"),
        region("ell", "image", "ellipselabels", {"x": 30, "y": 30, "radiusX": 10, "radiusY": 6 if same else 2,
                                                 "rotation": 0, "ellipselabels": ["ball"]}, f"e{who}"),
        region("brush", "image", "brushlabels", {"format": "rle", "rle": _mask(10 if same else 60),
                                                 "brushlabels": ["road"]}, f"b{who}"),
        region("bbox", "ocr", "rectangle", dict(box), f"o{who}"),
        region("label", "ocr", "labels", {**box, "labels": ["Text" if same else "Handwriting"]}, f"o{who}"),
        region("transcription", "ocr", "textarea", {**box, "text": ["Hello" if same else "Goodbye"]}, f"o{who}"),
        region("bbox", "ocr", "rectangle", {**box, "x": 70}, f"q{who}"),
        region("label", "ocr", "labels", {**box, "x": 70, "labels": ["Text"]}, f"q{who}"),
        region("track", "video", "videorectangle", {"framesCount": 50, "duration": 2.0, "labels": ["car"], "sequence": [
            {"frame": 1, "x": 10 + shift, "y": 10, "width": 20, "height": 20, "enabled": True, "rotation": 0,
             "time": 0.04},
            {"frame": 20, "x": 20 + shift, "y": 10, "width": 20, "height": 20, "enabled": False, "rotation": 0,
             "time": 0.8}]}, f"v{who}"),
        region("timeline", "video", "timelinelabels", {"ranges": [{"start": 1, "end": 10}],
                                                       "timelinelabels": ["run" if same else "walk"]}, f"t{who}"),
        region("speaker", "audio", "labels", {"start": 1.25, "end": 2.5, "channel": 0, "labels": ["A"]}, f"a{who}"),
        region("speaker", "audio", "labels", {"start": 2.6, "end": 2.9, "channel": 0, "labels": ["B" if same else "A"]},
               f"c{who}"),
        region("events", "ts", "timeserieslabels", {"start": 2, "end": 5 if same else 9, "instant": False,
                                                    "timeserieslabels": ["peak"]}, f"s{who}"),
        {"type": "relation", "from_id": f"o{who}", "to_id": f"q{who}", "direction": "right",
         "labels": ["next"] if same else []},
        {"from_name": "mood", "to_name": "text", "type": "choices", "value": {"choices": ["happy" if same else "sad"]}},
        {"from_name": "topics", "to_name": "text", "type": "taxonomy",
         "value": {"taxonomy": [["Animals", "Cats"], ["Plants"]] if same else [["Animals", "Dogs"], ["Plants"]]}},
        {"from_name": "when", "to_name": "text", "type": "datetime",
         "value": {"datetime": "2024-05-01" if same else "2024-06-01"}},
        {"from_name": "rank", "to_name": "answers", "type": "ranker",
         "value": {"ranker": {"answers": ["x", "y", "z"] if same else ["z", "y", "x"]}}},
    ]
    return out


def build(url: str, admin: LabelStudio, annotators: list[str], *, tasks: int = 2) -> int:
    """Create the project, import ``tasks`` tasks and post every annotator's results; return the project id."""
    project = admin.projects.create(title="all regions", label_config=CONFIG)
    admin.projects.import_tasks(id=project.id, request=[{"data": TASK_DATA} for _ in range(tasks)])
    ids = sorted(t.id for t in admin.tasks.list(project=project.id, page_size=100))
    for who, token in enumerate(annotators):
        client = LabelStudio(base_url=url, api_key=token)
        for index, task in enumerate(ids):
            client.annotations.create(id=task, result=results(who, index))
    return int(project.id)


def main(url: str, token: str) -> None:
    from plugin.labelstudio.localserver import sign_up

    admin = LabelStudio(base_url=url, api_key=token)
    annotators = [sign_up(url, f"regions{who}@example.com")[1] for who in range(3)]
    project = build(url, admin, annotators)
    dumped = [t.model_dump(mode="json") for t in admin.tasks.list(project=project, page_size=100, fields="all")]
    target = Path(__file__).with_name("region_tasks.json")
    target.write_text(json.dumps({"label_config": CONFIG, "tasks": dumped}, indent=1) + "\n")
    print(f"wrote {target} ({len(dumped)} tasks)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
