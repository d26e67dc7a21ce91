"""The consensus as a Label Studio prediction: its results per tag, and the diff that keeps one per task."""

from plugin.mapping.annotations import Skips
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import ReviewOptions
from plugin.state.blocks import TaskAsRead, needed_write
from plugin.state.predictions import MODEL_VERSION, needed_prediction, prediction_results, read_prediction
from plugin.state.references import task_references

CONTROLS = parse_label_config("""<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices>
<Choices name="topics" toName="text" choice="multiple"><Choice value="a"/><Choice value="b"/></Choices>
<Rating name="quality" toName="text" maxRating="5"/>
<Taxonomy name="kind" toName="text"><Choice value="Animal"><Choice value="Cat"/></Choice></Taxonomy>
<Labels name="ner" toName="text"><Label value="PER"/></Labels>
<Choices name="region_kind" toName="text" perRegion="true"><Choice value="x"/></Choices></View>""")
BLOCK = {"controls": {
    "sentiment": {"consensus": {"label": "neg", "posterior": 0.91, "method": "dawid-skene"}},
    "topics": {"consensus": {"label": ["a", "b"], "posterior": 0.7, "method": "dawid-skene"}},
    "quality": {"consensus": {"label": 4, "posterior": 0.88, "method": "dawid-skene"}},
    "kind": {"consensus": {"label": ["Animal / Cat"], "posterior": 0.95, "method": "dawid-skene"}},
    "ner": {"consensus": {"label": "PER", "posterior": 0.5, "method": "dawid-skene"}},
    "region_kind": {"consensus": {"label": ["x"], "posterior": [0.4], "items": ["1:r"], "method": "dawid-skene"}},
}}


def test_each_task_level_tag_gets_the_result_an_annotator_of_it_would_give():
    results, score = prediction_results(BLOCK, CONTROLS)
    values = {r["from_name"]: (r["type"], r["value"], r["to_name"]) for r in results}
    assert values == {"kind": ("taxonomy", {"taxonomy": [["Animal", "Cat"]]}, "text"),
                      "quality": ("rating", {"rating": 4}, "text"),
                      "sentiment": ("choices", {"choices": ["neg"]}, "text"),
                      "topics": ("choices", {"choices": ["a", "b"]}, "text")}
    assert score == 0.7  # the least posterior of the controls predicted (spans and regions are left out)


def _task(*predictions):
    return {"id": 1, "meta": {}, "predictions": list(predictions)}


def test_a_missing_prediction_is_created_an_equal_one_left_and_a_different_one_updated():
    results, score = prediction_results(BLOCK, CONTROLS)
    created = needed_prediction(read_prediction(_task()), BLOCK, CONTROLS)
    assert created is not None and created.id is None and created.results == results and created.score == score
    same = _task({"id": 5, "model_version": MODEL_VERSION, "result": results, "score": score})
    assert needed_prediction(read_prediction(same), BLOCK, CONTROLS) is None
    other = _task({"id": 5, "model_version": MODEL_VERSION, "result": results[:1], "score": score})
    update = needed_prediction(read_prediction(other), BLOCK, CONTROLS)
    assert update is not None and update.id == 5 and update.delete == ()


def test_copies_are_deleted_and_a_task_without_consensus_loses_its_prediction():
    results, score = prediction_results(BLOCK, CONTROLS)
    two = _task({"id": 5, "model_version": MODEL_VERSION, "result": results, "score": score, "created_at": "1"},
                {"id": 6, "model_version": MODEL_VERSION, "result": results, "score": score, "created_at": "2"},
                {"id": 7, "model_version": "v1", "result": []})
    kept = needed_prediction(read_prediction(two), BLOCK, CONTROLS)
    assert kept is not None and kept.id == 6 and kept.delete == (5,)
    gone = needed_prediction(read_prediction(two), {"controls": {}}, CONTROLS)
    assert gone is not None and gone.results is None and set(gone.delete) == {5, 6}


def test_the_write_asks_for_the_prediction_only_when_the_option_is_on():
    block = {**BLOCK, "n_annotations": 2, "flagged": False}
    read = TaskAsRead(meta={"agreement": block})
    assert needed_write(read, block, review=ReviewOptions(), controls=CONTROLS) is None
    write = needed_write(read, block, review=ReviewOptions(consensus_predictions=True), controls=CONTROLS)
    assert write is not None and write.meta is None and write.prediction is not None


def test_the_consensus_prediction_is_never_a_reference():
    skips = Skips()
    task = _task({"id": 5, "model_version": MODEL_VERSION, "result": [], "created_at": "1"},
                 {"id": 7, "model_version": "v1", "result": [], "created_at": "1"})
    refs = task_references(task, 1, skips)
    assert [s.annotator for s in refs.submissions] == ["ref:model:v1"]
    assert any("consensus prediction" in reason for reason in skips.reasons)
