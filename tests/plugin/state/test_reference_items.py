"""One accuracy on ground truth: a span control's references are each aligned with the annotators alone.

The same annotator's accuracy on ground truth is computed once, over the same items, whether the tasks carry model
predictions (a live project) or not (an export without them), and the consensus section shows that figure.
"""

import copy

import pytest

from plugin.demo import CONFIG, simulated_export
from plugin.mapping.labelconfig import parse_label_config
from plugin.report import build_report
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

NER = """<View><Text name="text" value="$text"/>
<Labels name="ner" toName="text"><Label value="PER"/><Label value="ORG"/></Labels></View>"""


def _span(start, end, label):
    return {"from_name": "ner", "to_name": "text", "type": "labels",
            "value": {"start": start, "end": end, "labels": [label]}}


def _state(tasks, config=NER):
    state = ProjectState(None, parse_label_config(config), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20))
    state.load(tasks)
    return state


def _truth_rows(state, control):
    block = state.scores().controls[control].references or {}
    return {row["annotator"]: (row["n_items"], row["accuracy"]) for row in block["ground_truth"]["annotators"]}


def _ner_task(*, predicted):
    """Annotator 1 agrees with the ground truth's PER at 0-5, annotator 2 calls it ORG; a model slips a character."""
    def annotation(identifier, who, label):
        return {"id": identifier, "completed_by": who, "was_cancelled": False, "ground_truth": False,
                "updated_by": who, "created_at": "2026-01-05T09:00:00Z", "result": [_span(0, 5, label)]}

    task = {"id": 1, "data": {"text": "Alice met Bob"},
            "annotations": [annotation(1, 1, "PER"), annotation(2, 2, "ORG"),
                            {"id": 3, "completed_by": 9, "ground_truth": True, "updated_by": None,
                             "was_cancelled": False, "created_at": "2026-01-04T09:00:00Z",
                             "result": [_span(0, 5, "PER")]}]}
    if predicted:
        task["predictions"] = [{"id": 7, "model_version": "v1", "created_at": "2026-01-04T09:00:00Z",
                                "result": [_span(0, 4, "PER")]}]
    return task


def test_a_models_slipped_span_leaves_the_ground_truths_items_as_they_are():
    # Before, the ground truth, the model and the annotators were aligned together: the model's span at 0-4 made
    # an item of its own where the ground truth and both annotators said "no span", so each annotator had 2 items
    # on ground truth with the model's prediction and 1 without (annotator 2: 0.5, then 0.0).
    with_model, without = _state([_ner_task(predicted=True)]), _state([_ner_task(predicted=False)])
    assert _truth_rows(with_model, "ner") == _truth_rows(without, "ner") == {"1": (1, 1.0), "2": (1, 0.0)}
    # the model is scored against the annotators on its own alignment: its 0-4 is an item apart from their 0-5
    model = with_model.scores().controls["ner"].references["models"]["v1"]
    assert {row["annotator"]: row["n_items"] for row in model["annotators"]} == {"1": 2, "2": 2}


@pytest.fixture(scope="module")
def demo():
    tasks = simulated_export(120, seed=5, references=True)
    bare = copy.deepcopy(tasks)
    for task in bare:
        del task["predictions"]  # as an export without predictions holds them (Label Studio's quick export)
    return _state(tasks, CONFIG), _state(bare, CONFIG)


def test_the_ground_truth_figures_are_the_same_with_and_without_the_predictions(demo):
    live, export = demo
    for control in ("entities", "sentiment", "topics", "helpfulness"):
        assert _truth_rows(live, control) == _truth_rows(export, control), control


def test_a_model_versions_figures_do_not_depend_on_another_version(demo):
    live, _ = demo
    one = copy.deepcopy(simulated_export(120, seed=5, references=True))
    for task in one:
        task["predictions"] = [p for p in task["predictions"] if p["model_version"] == "sim-model-v1"]
    alone = _state(one, CONFIG).scores().controls["entities"].references["models"]["sim-model-v1"]
    both = live.scores().controls["entities"].references["models"]["sim-model-v1"]
    assert alone["annotators"] == both["annotators"] and alone["kappa_mean"] == both["kappa_mean"]


def test_the_consensus_shows_the_accuracy_on_ground_truth_of_the_references(demo):
    live, _ = demo
    report = build_report(live.snapshot(), source="demo", generated_at="now")
    truth = report.references[report.references["reference"] == "ground truth"].set_index(["control", "annotator"])
    consensus = report.consensus.set_index(["control", "annotator"])
    assert len(consensus) == 20 and set(consensus.index) == set(truth.index)
    for key, row in consensus.iterrows():
        assert row["ground_truth_accuracy"] == truth.loc[key, "accuracy"], key
        assert row["n_ground_truth"] == truth.loc[key, "n_items"], key
    # the sync summary's consensus block says the same
    summary = live.scores().controls["entities"].summary()["consensus"]["annotators"]
    assert {who: (row["ground_truth_accuracy"], row["n_ground_truth"]) for who, row in summary.items()} == {
        who: (truth.loc[("entities", who), "accuracy"], truth.loc[("entities", who), "n_items"]) for who in summary}
