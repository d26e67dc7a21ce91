"""Results for any labeling config, made the way Label Studio stores them, for the template corpus test.

``results_for(controls, variant)`` gives one annotator's results: variant 0
and every other annotator with variant 0 agree on everything; variant 1
changes every control's answer (another label where the control has one,
else another position or value).
"""

import numpy as np
from label_studio_sdk.converter.brush import mask2rle

from plugin.mapping.families import REGION_TAGS, TOOL_TAGS

SIZE = {"original_width": 160, "original_height": 48}


def _label(control, variant):
    labels = control.labels or ("A", "B")
    return labels[variant % len(labels)] if len(labels) > 1 else labels[0]


def _moved(control):
    """Whether variant 1 must move the region, having no second label to give it."""
    return len(control.labels) < 2


def _mask(x):
    mask = np.zeros((48, 160), dtype=np.uint8)
    mask[10:30, x:x + 20] = 255
    return [int(v) for v in mask2rle(mask)]


def geometry(control, place):
    """A region's value at ``place`` (0, 1, 2: far apart), by what the control draws on."""
    tag, obj = control.tag, control.object_tag
    x = 5 + 30 * place
    if tag in ("labels",) and obj in ("", "text"):
        return {"start": 10 * place, "end": 10 * place + 5, "text": "word"}
    if tag == "hypertextlabels":
        return {"start": "/p[1]/text()[1]", "end": "/p[1]/text()[1]", "startOffset": 10 * place,
                "endOffset": 10 * place + 5, "globalOffsets": {"start": 10 * place, "end": 10 * place + 5}}
    if tag == "paragraphlabels":
        return {"start": str(place), "end": str(place), "startOffset": 0, "endOffset": 5}
    if tag == "labels" and obj in ("audio", "audioplus", "video", "timeseries"):
        return {"start": 1.25 + 10 * place, "end": 3.5 + 10 * place, "channel": 0}
    if tag == "timeserieslabels":
        return {"start": 10 * place, "end": 10 * place + 5, "instant": False}
    if tag == "timelinelabels":
        return {"ranges": [{"start": 1 + 20 * place, "end": 10 + 20 * place}]}
    if tag == "videorectangle":
        return {"framesCount": 100, "duration": 4.0, "sequence": [
            {"frame": 1, "x": x, "y": 10, "width": 20, "height": 20, "enabled": True, "rotation": 0, "time": 0.04},
            {"frame": 10, "x": x + 2, "y": 10, "width": 20, "height": 20, "enabled": False, "rotation": 0,
             "time": 0.4}]}
    if tag in ("polygonlabels", "polygon"):
        return {"points": [[x, 10], [x + 20, 10], [x + 20, 30], [x, 30]], "closed": True}
    if tag in ("vectorlabels", "vector"):
        return {"vertices": [{"x": x, "y": 10}, {"x": x + 20, "y": 10}, {"x": x + 20, "y": 30}], "closed": True}
    if tag in ("ellipselabels", "ellipse"):
        return {"x": x + 10, "y": 20, "radiusX": 10, "radiusY": 8, "rotation": 0}
    if tag in ("keypointlabels", "keypoint"):
        return {"x": x, "y": 20, "width": 1}
    if tag in ("brushlabels", "brush", "magicwand"):
        return {"format": "rle", "rle": _mask(x)}
    return {"x": x, "y": 10, "width": 20, "height": 20, "rotation": 0}  # boxes, OCR, labels on an image


def _region_results(control, variant):
    place = 1 if variant and _moved(control) else 0
    out = []
    for index in (0, 1):  # two regions, far apart, so relations have two ends
        value = geometry(control, place + 2 * index if index else place)
        rid = f"{control.name}-{index}"
        if control.tag in TOOL_TAGS:
            kind = control.result_type
        else:
            kind = control.result_type
            key = "labels" if control.tag == "videorectangle" else kind
            value[key] = [_label(control, variant if not _moved(control) else 0)]
        out.append({"id": rid, "from_name": control.name, "to_name": control.to_name, "type": kind,
                    "value": value, **SIZE})
    return out


def _answer(control, variant):
    tag = control.tag
    if tag == "choices":
        return {"choices": [_label(control, variant)]} if len(control.labels) > 1 or not variant else {"choices": []}
    if tag == "rating":
        return {"rating": 2 + variant}
    if tag == "number":
        return {"number": 5 + 2 * variant}
    if tag == "textarea":
        return {"text": [["hello there", "something else"][variant]]}
    if tag == "taxonomy":
        paths = [p.split(" / ") for p in control.labels] or [["A"], ["B"]]
        return {"taxonomy": [paths[variant % len(paths)]]}
    if tag == "pairwise":
        return {"selected": ["left", "right"][variant]}
    if tag == "datetime":
        return {"datetime": ["2024-01-02T10:00", "2024-03-05T11:00"][variant]}
    if tag == "ranker":
        if control.labels:
            first, second = control.labels[:2] if len(control.labels) > 1 else (control.labels[0], "_")
            return {"ranker": {first: ["a", "b"], second: []} if not variant else {first: ["b"], second: ["a"]}}
        return {"ranker": {control.to_name: [["a", "b", "c"], ["b", "a", "c"]][variant]}}
    return None


def results_for(controls, variant):
    """One annotator's results for every control of a config; see the module notes."""
    out = []
    regions = []
    for control in controls.values():
        if control.tag in REGION_TAGS:
            made = _region_results(control, variant)
            out.extend(made)
            regions.append(made)
    anchor = regions[0] if regions else []
    for control in controls.values():
        value = _answer(control, variant)
        if value is None:
            continue
        if control.per_region:
            if not anchor:
                continue
            for index, region in enumerate(anchor):
                out.append({"id": region["id"], "from_name": control.name, "to_name": control.to_name,
                            "type": control.result_type, "value": value})
        else:
            out.append({"from_name": control.name, "to_name": control.to_name, "type": control.result_type,
                        "value": value})
    if "relations" in controls and anchor:
        labels = controls["relations"].labels
        relation = {"type": "relation", "from_id": anchor[0]["id"], "to_id": anchor[1]["id"], "direction": "right",
                    "labels": [labels[variant % len(labels)]] if labels else []}
        if labels or not variant:
            out.append(relation)
    return [r for r in out if r.get("value") != {"choices": []}]
