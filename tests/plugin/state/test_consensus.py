"""Each task's consensus in the project state: what a pass writes, what an event writes, and what sync shows."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.consensus import dawid_skene, held_posterior, majority_vote
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.consensus import (
    POSTERIOR_DIGITS,
    ItemConsensus,
    TaskConsensus,
    _vote,
    fit_items,
    held_in_blocks,
    label_order,
    task_consensus,
)
from plugin.state.project import ProjectState
from plugin.state.references import GROUND_TRUTH
from plugin.summary import consensus_lines
from tests.profiles import examples

CONFIG = parse_label_config("""<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
<Choices name="topics" toName="text" choice="multiple"><Choice value="a"/><Choice value="b"/></Choices>
<Rating name="quality" toName="text" maxRating="5"/><Number name="score" toName="text"/></View>""")
LABELS = ("pos", "neg", "neu")


def _annotation(identifier, task, who, sentiment, *, topics=("a",), rating=3, truth=False):
    return {"id": identifier, "task": task, "completed_by": who, "was_cancelled": False, "ground_truth": truth,
            "updated_at": "2026-01-01T00:00:00Z",
            "result": [{"from_name": "sentiment", "type": "choices", "value": {"choices": [sentiment]}},
                       {"from_name": "topics", "type": "choices", "value": {"choices": list(topics)}},
                       {"from_name": "quality", "type": "rating", "value": {"rating": rating}},
                       {"from_name": "score", "type": "number", "value": {"number": 1.0}}]}


def _project(n_tasks=60, seed=0, *, truth_every=0):
    """Annotators 1-3 usually right (1 always), 4 and 5 guess; every task has three of them."""
    rng = np.random.default_rng(seed)
    tasks, identifier = [], 0
    for task in range(1, n_tasks + 1):
        true = LABELS[task % 3]
        annotations = []
        for who in rng.choice([1, 2, 3, 4, 5], size=3, replace=False).tolist():
            right = who == 1 or (who <= 3 and rng.random() < 0.85)
            identifier += 1
            annotations.append(_annotation(identifier, task, who, true if right else str(rng.choice(LABELS))))
        if truth_every and task % truth_every == 0:
            identifier += 1
            annotations.append(_annotation(identifier, task, 9, true, truth=True))
        tasks.append({"id": task, "project": 1, "meta": {}, "data": {"text": "x"}, "annotations": annotations})
    return tasks


def _state(tasks, **scoring):
    return ProjectState.from_tasks(tasks, CONFIG, mapping=MappingOptions(),
                                   scoring=ScoringOptions(n_resamples=20, **scoring))


def _rows(state, name):
    """Every (item, annotator, label) code of a control, with the tasks' items in order."""
    control = state.controls[name]
    tasks = sorted(control.records)
    items, annotators, labels = [], [], []
    for place, task in enumerate(tasks):
        for _, _, who, label in control.task_records(task):
            items.append(place)
            annotators.append(control.annotators.values.index(who))
            labels.append(control.labels.values.index(label))
    return tasks, np.array(items), np.array(annotators), np.array(labels)


def test_a_task_s_consensus_is_dawid_skene_s_label_and_posterior_over_every_task():
    state = _state(_project())
    scores = state.task_scores()
    tasks, items, annotators, labels = _rows(state, "sentiment")
    control = state.controls["sentiment"]
    fit = dawid_skene(items, annotators, labels, n_labels=len(control.labels.values),
                      n_annotators=len(control.annotators.values), prior=ScoringOptions().consensus_prior)
    for place, task in enumerate(tasks):
        block = scores[task].controls["sentiment"]["consensus"]
        assert block["method"] == "dawid-skene"
        assert block["label"] == control.labels.values[fit.labels[place]]
        assert block["posterior"] == pytest.approx(fit.posterior[place].max(), abs=0.02)


def test_the_consensus_trusts_the_reliable_annotator_where_majority_vote_does_not():
    # Annotator 1 is always right; on task 61, annotators 4 and 5 (guessers) outvote them.
    tasks = _project(120, seed=1)
    tasks.append({"id": 500, "project": 1, "meta": {}, "data": {"text": "x"},
                  "annotations": [_annotation(9001, 500, 1, "neu"), _annotation(9002, 500, 4, "pos"),
                                  _annotation(9003, 500, 5, "pos")]})
    ds = _state(tasks).task_scores()[500].controls["sentiment"]["consensus"]
    vote = _state(tasks, consensus="majority").task_scores()[500].controls["sentiment"]["consensus"]
    assert (vote["label"], vote["posterior"], vote["method"]) == ("pos", 0.67, "majority")
    assert ds["label"] == "neu" and ds["method"] == "dawid-skene"


def test_a_task_scored_alone_after_a_pass_carries_what_the_pass_gave_it():
    state = _state(_project())
    every = state.task_scores()
    for task in list(every)[:20]:
        assert state.task_scores([task])[task].controls == every[task].controls


def test_an_event_is_scored_with_the_held_fit_and_the_next_pass_fits_again_as_a_batch_read_does():
    tasks = _project()
    state = _state(tasks)
    state.task_scores()
    held = state.controls["sentiment"].consensus
    changed = {**tasks[0], "annotations": [_annotation(7001, 1, 1, "neu"), _annotation(7002, 1, 2, "neu")]}
    state.set_task(changed)
    live = state.task_scores([1])[1].controls["sentiment"]["consensus"]
    assert state.controls["sentiment"].consensus is held and live["label"] == "neu"  # no refit on an event
    after_pass = state.task_scores()
    batch = _state([changed, *tasks[1:]]).task_scores()
    assert all(after_pass[t].controls == batch[t].controls for t in batch)


def test_multiple_choices_carry_the_set_of_labels_whose_consensus_is_yes():
    tasks = _project(30)
    for task in tasks:
        for annotation in task["annotations"]:
            annotation["result"][1]["value"]["choices"] = ["a", "b"] if annotation["completed_by"] != 5 else ["b"]
    scores = _state(tasks).task_scores()
    labels = {tuple(scores[t].controls["topics"]["consensus"]["label"]) for t in scores}
    assert labels <= {("a", "b"), ("b",)} and ("a", "b") in labels


def test_a_rating_gets_a_consensus_and_a_number_none():
    scores = _state(_project(30)).task_scores()
    controls = scores[1].controls
    assert controls["quality"]["consensus"]["label"] == 3 and "consensus" not in controls["score"]


def test_consensus_off_leaves_the_blocks_as_they_were():
    scores = _state(_project(30), consensus="off").task_scores()
    assert all("consensus" not in c for t in scores for c in scores[t].controls.values())


def test_ground_truth_is_known_and_shown_beside_the_estimated_accuracy():
    tasks = _project(90, seed=2, truth_every=3)
    state = _state(tasks)
    scores = state.scores()
    summary = scores.controls["sentiment"].summary(people={"1": "Ann"})["consensus"]
    assert summary["n_ground_truth"] == 30
    ann = summary["annotators"]["1"]
    # Ann is always right, on about 18 items a true label: against the prior's pseudo-counts (2 on the diagonal, 1
    # shared off it) at most (18 + 2) / (18 + 3) = 0.95, less as the fit is unsure of some items' labels
    assert ann["name"] == "Ann" and ann["ground_truth_accuracy"] == 1.0 and 0.85 < ann["accuracy"] < 0.96
    assert summary["annotators"]["4"]["accuracy"] < 0.6 and summary["annotators"]["4"]["name"] == "4"
    confusion = np.array(ann["confusion"])
    assert confusion.shape == (3, 3) and np.allclose(confusion.sum(axis=1), 1.0, atol=2e-4)  # 4 decimals a cell
    assert set(summary["priors"]) == set(LABELS) and summary["converged"]
    third = scores.tasks[3].controls["sentiment"]["consensus"]
    assert third == {"label": LABELS[0], "posterior": 1.0, "method": "dawid-skene"}  # task 3: known


def test_each_annotator_s_answers_are_counted_beside_their_accuracy_and_a_right_newcomer_reads_accurate():
    # annotator 6 joins late and labels three tasks, all of true label LABELS[0], rightly: by the label priors their
    # accuracy would read about a third. They used one label, so the prior's pseudo-counts of others are left out
    # and their row of LABELS[0] is certain: their accuracy is the mean posterior of LABELS[0] on their three tasks
    tasks = _project(60, seed=4)
    for task in tasks[2:9:3]:  # tasks 3, 6, 9: true label LABELS[0]
        task["annotations"].append(_annotation(1000 + task["id"], task["id"], 6, LABELS[0]))
    state = _state(tasks)
    scores = state.scores()
    summary = scores.controls["sentiment"].summary(people={})["consensus"]
    answered = Counter(a["completed_by"] for task in tasks for a in task["annotations"])
    assert {who: row["n_answers"] for who, row in summary["annotators"].items()} == {
        str(who): n for who, n in answered.items()}
    newcomer = summary["annotators"]["6"]
    theirs = [scores.tasks[task].controls["sentiment"]["consensus"] for task in (3, 6, 9)]
    assert all(one["label"] == LABELS[0] for one in theirs)
    assert newcomer["n_answers"] == 3 and newcomer["accuracy"] > 0.6
    assert newcomer["accuracy"] == pytest.approx(np.mean([one["posterior"] for one in theirs]), abs=0.01)
    live = state.live_summary()["sentiment"]["consensus"]
    assert live["n_answers"] == {who: row["n_answers"] for who, row in summary["annotators"].items()}
    assert live["accuracy"] == {who: row["accuracy"] for who, row in summary["annotators"].items()}
    assert consensus_lines("sentiment", summary)[0].endswith(
        "least estimated accuracy: " + ", ".join(
            f"{who} {row['accuracy']:.2f} ({row['n_answers']} answers)"
            for who, row in sorted(summary["annotators"].items(), key=lambda entry: entry[1]["accuracy"])[:3]) + ".")


def test_uncertain_tasks_are_flagged_with_flag_on_posterior_and_not_by_default():
    tasks = _project(60)
    plain = _state(tasks).task_scores()
    uncertain = _state(tasks, flag_on="posterior", min_posterior=0.99).task_scores()
    reasons = [r for t in uncertain for r in uncertain[t].reasons]
    assert reasons and all("consensus uncertain" in r for r in reasons)
    assert not any("consensus uncertain" in r for t in plain for r in plain[t].reasons)
    flagged = {t for t in uncertain if uncertain[t].flagged}
    lowest = {t for t in uncertain
              if min(c["consensus"]["posterior"] for c in uncertain[t].controls.values() if "consensus" in c) < 0.99}
    assert flagged == lowest


def test_majority_vote_from_pairs_equals_the_dense_one_whatever_the_number_of_labels():
    rng = np.random.default_rng(3)
    items, labels = rng.integers(0, 40, 300), rng.integers(0, 7, 300)
    dense = majority_vote(items, labels, n_items=45, n_labels=7)
    sparse = _vote(items, labels, 45, np.full(45, -1))
    assert sparse.label.tolist() == dense.labels.tolist() and sparse.tie.tolist() == dense.ties.tolist()
    shown = dense.posterior.max(axis=1)
    assert np.allclose(np.where(dense.labels >= 0, shown, np.nan), sparse.posterior, equal_nan=True)


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=40),
       st.permutations(range(4)))
def test_renaming_annotators_changes_no_task_s_consensus(rows, rename):
    rows = np.array(sorted({(i, w): (i, w, l) for i, w, l in rows}.values()))
    known = np.full(6, -1)
    _, items = fit_items(rows, 6, known=known, method="dawid-skene", labels=LABELS, annotators="abcd")
    renamed = rows.copy()
    renamed[:, 1] = np.array(rename)[rows[:, 1]]
    _, again = fit_items(renamed, 6, known=known, method="dawid-skene", labels=LABELS,
                         annotators=[("abcd")[rename.index(k)] for k in range(4)])
    assert np.allclose(items.posterior, again.posterior, atol=1e-6, equal_nan=True)


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40),
       st.permutations(range(4)), st.sampled_from(["dawid-skene", "majority"]), st.integers(0, 2))
def test_labels_coded_in_another_order_give_every_item_the_same_consensus(rows, recode, method, n_categories):
    """A live state codes the labels it does not know from the config as it first reads them. A tie (two
    annotators who disagree) went to the lowest code, so tasks read in another order got another consensus (the
    fuzz of exports found it): a tie goes to the first label of :func:`label_order`, whatever the codes."""
    names = ["b", "no span", "a", "c"]
    rows = np.array(sorted({(i, w): (i, w, l) for i, w, l in rows}.values()))
    known = np.full(6, -1)
    # the first n_categories codes are the config's (they keep their codes), the others any order
    recode = [*range(n_categories), *[code for code in recode if code >= n_categories]]
    recoded = rows.copy()
    recoded[:, 2] = np.array(recode)[rows[:, 2]]
    relabelled = [names[recode.index(code)] for code in range(4)]
    fit, items = fit_items(rows, 6, known=known, method=method, labels=names, annotators="abcd",
                           n_categories=n_categories)
    again_fit, again = fit_items(recoded, 6, known=known, method=method, labels=relabelled, annotators="abcd",
                                 n_categories=n_categories)
    said = items.label >= 0
    assert [names[code] for code in items.label[said]] == [relabelled[code] for code in again.label[said]]
    assert fit.summary({})["labels"] == again_fit.summary({})["labels"]
    assert label_order(names, n_categories).tolist() == sorted(range(4), key=lambda code: (
        code >= n_categories, code if code < n_categories else 0, names[code]))


def test_a_task_read_live_in_any_order_gets_the_consensus_of_a_batch_read():
    """Two annotators disagree on a span's label (a tie), with the controls inferred: the live state, fed the tasks
    in another order, gave the task another consensus label than the batch read."""
    def task(identifier, first, second):
        spans = [{"id": f"r{identifier}", "from_name": "ner", "to_name": "text", "type": "labels",
                  "value": {"start": 0, "end": 4, "labels": [label]}} for label in (first, second)]
        return {"id": identifier, "data": {"text": "Alice"}, "annotations": [
            {"id": 10 * identifier + k, "completed_by": k + 1, "result": [span] if span["value"]["labels"] != ["-"]
             else []} for k, span in enumerate(spans)]}

    tasks = [task(1, "B", "-"), task(2, "A", "-"), task(3, "A", "B")]  # "-": the annotator marked nothing
    from plugin.mapping.labelconfig import infer_controls

    controls = infer_controls(tasks)
    batch = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(),
                                    scoring=ScoringOptions(n_resamples=20, consensus="majority"))
    live = ProjectState(None, controls, mapping=MappingOptions(),
                        scoring=ScoringOptions(n_resamples=20, consensus="majority"))
    for read in reversed(tasks):
        live.set_task(read)
    assert live.task_scores() == batch.task_scores()
    assert batch.task_scores()[3].controls["ner"]["consensus"]["label"] == "A"  # "A" before "B", tied 1 to 1


def test_a_ground_truth_label_no_annotator_gives_is_known_live_and_batch_alike():
    """A reviewer marked an annotator's rating 1 as ground truth; the annotator's later annotation says 2, and the
    controls are inferred. The batch read never coded the rating 1, so its consensus ignored the ground truth and
    said 2; the live state, which coded 1 when it first read the task, said 1 (the fuzz of exports found it). Both
    now give the ground truth's label, and fit without it alike."""
    def rating(identifier, value, truth):
        return {"id": identifier, "completed_by": 1, "ground_truth": truth, "updated_at": "2026-01-02T00:00:00Z",
                "result": [{"from_name": "quality", "type": "rating", "value": {"rating": value}}]}

    task = {"id": 1, "data": {}, "annotations": [rating(1, 1, True), rating(2, 2, False)]}
    other = {"id": 2, "data": {}, "annotations": [rating(3, 2, False), {**rating(4, 3, False), "completed_by": 2}]}
    from plugin.mapping.labelconfig import infer_controls

    controls = infer_controls([task, other])
    scoring = ScoringOptions(n_resamples=20)
    batch = ProjectState.from_tasks([task, other], controls, mapping=MappingOptions(), scoring=scoring)
    live = ProjectState(None, controls, mapping=MappingOptions(), scoring=scoring)
    for read in ({**task, "annotations": task["annotations"][:1]}, other, task):
        live.set_task(read)
    assert live.task_scores() == batch.task_scores()
    assert batch.task_scores()[1].controls["quality"]["consensus"] == {"label": 1, "posterior": 1.0,
                                                                       "method": "dawid-skene"}


def test_several_items_carry_lists_and_their_codes_set_them_apart():
    items = fit_items(np.array([[0, 0, 0], [1, 0, 1], [2, 0, 0]]), 3, known=np.full(3, -1), method="majority",
                      labels=LABELS, annotators=["a"])[1]
    consensus = task_consensus("majority", items, np.array([2, 1]), labels=LABELS, keys=lambda at: ("x", "y"),
                               key_codes=np.array([0, 1, 0]))
    assert isinstance(consensus, TaskConsensus)
    assert consensus.block(0) == {"label": ["pos", "neg"], "posterior": 1.0, "method": "majority"}
    assert consensus.texts().tolist() == ["pos; neg", "pos"] and round(0.123456, POSTERIOR_DIGITS) == 0.12


def test_tasks_whose_consensus_blocks_are_equal_share_a_code_and_others_do_not():
    # a pass builds each distinct block once: a task of several items is no longer built apart (a million demo
    # tasks' pass took 122 s where it took 17 s without consensus)
    rows = np.array([[0, 0, 0], [1, 0, 1], [2, 0, 0], [3, 0, 1], [4, 0, 0], [5, 0, 2], [6, 0, 0]])
    items = fit_items(rows, 7, known=np.full(7, -1), method="majority", labels=LABELS, annotators=["a"])[1]
    keys = np.array([0, 1, 0, 1, 0, 1, 5])  # tasks 0, 1 and 2 hold keys 0 and 1; task 3 holds key 5
    consensus = task_consensus("majority", items, np.array([2, 2, 2, 1]), labels=LABELS, keys=lambda at: (),
                               key_codes=keys)
    codes = consensus.codes()
    assert codes[0] == codes[1] != codes[2] and len(set(codes.tolist())) == 3  # task 2 says neu where 0, 1 say neg
    assert consensus.block(0) == consensus.block(1) != consensus.block(2)
    state = _state(_project(60))
    scores = state.task_scores()
    blocks = {}
    for place, code in enumerate(scores.score_codes()[0].tolist()):
        block = scores.at(place).controls
        assert blocks.setdefault(code, block) == block  # one code, one block


def test_a_reference_key_is_never_an_annotator_of_the_consensus():
    state = _state(_project(30, truth_every=2))
    state.task_scores()
    assert GROUND_TRUTH not in state.controls["sentiment"].consensus.annotators


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=60),
       st.lists(st.integers(-1, 2), min_size=12, max_size=12), st.integers(1, 12), st.randoms())
def test_items_held_under_a_fit_a_block_at_a_time_equal_held_at_once(rows, known, at_most, rnd):
    rows = np.array(list({(i, w): (i, w, l) for i, w, l in rows}.values()))
    rows = rows[rnd.sample(range(len(rows)), len(rows))]  # in any order: a block's items are found, not sliced
    known = np.array(known)
    fit = dawid_skene(rows[:, 0], rows[:, 1], rows[:, 2], n_items=12, n_annotators=4, n_labels=3, known=known)
    options = {"n_items": 12, "known": known}
    whole = held_in_blocks(fit, rows[:, 0], rows[:, 1], rows[:, 2], **options, at_most=12)
    blocks = held_in_blocks(fit, rows[:, 0], rows[:, 1], rows[:, 2], **options, at_most=at_most)
    once = ItemConsensus.of(held_posterior(fit, rows[:, 0], rows[:, 1], rows[:, 2], **options))
    for found in (whole, blocks):  # bit for bit: each item's own sums, in the order given
        np.testing.assert_array_equal(found.label, once.label)
        np.testing.assert_array_equal(found.posterior, once.posterior)
        np.testing.assert_array_equal(found.tie, once.tie)


def test_a_label_set_names_its_labels_with_their_probability_and_an_empty_set_in_words():
    # Three annotators chose [price, quality], [service] and [delivery]: by majority vote no label has more than
    # half the votes, and the consensus is no label at all (before, a blank cell).
    keys = ("topics:price", "topics:service", "topics:quality", "topics:delivery")
    chose = ({"price", "quality"}, {"service"}, {"delivery"})
    rows = np.array([[item, who, int(label in chose[who])]
                     for item, label in enumerate(["price", "service", "quality", "delivery"]) for who in range(3)])
    rows = np.concatenate([rows, rows + [4, 0, 0]])  # a second task where everyone said yes to every label
    rows[rows[:, 0] >= 4, 2] = 1
    items = fit_items(rows, 8, known=np.full(8, -1), method="majority", labels=("no", "yes"),
                      annotators=["a", "b", "c"], n_categories=2)[1]
    consensus = task_consensus("majority", items, np.array([4, 4]), labels=("no", "yes"), keys=lambda at: keys,
                               key_codes=np.arange(8) % 4, label_set=True,
                               config_labels=("price", "service", "quality", "delivery"))
    assert consensus.block(0)["label"] == []
    assert consensus.texts().tolist() == [
        "none above 0.5: price 0.33, service 0.33, quality 0.33, delivery 0.33",
        "price (1.00), service (1.00), quality (1.00), delivery (1.00)"]


def test_a_span_consensus_gives_each_spans_position():
    # before, "PER; PER; PER": which span was which could not be told
    items = fit_items(np.array([[0, 0, 0], [1, 0, 1], [2, 0, 2], [3, 0, 0]]), 4, known=np.full(4, -1),
                      method="majority", labels=("PER", "ORG", "no span"), annotators=["a"])[1]
    consensus = task_consensus("majority", items, np.array([3, 1]), labels=("PER", "ORG", "no span"),
                               keys=lambda at: (("0-5", "12-17", "20-23"), ("4-9",))[at], key_codes=np.arange(4))
    assert consensus.texts(positions=True).tolist() == ["PER [0-5]; ORG [12-17]; no span [20-23]", "PER [4-9]"]
    assert consensus.texts().tolist() == ["PER; ORG; no span", "PER"]  # a control of items without positions


def test_the_demos_least_certain_tasks_read_their_spans_and_label_sets():
    from plugin.demo import CONFIG as DEMO, simulated_export
    from plugin.report import build_report

    state = ProjectState.from_tasks(simulated_export(300), parse_label_config(DEMO), mapping=MappingOptions(),
                                    scoring=ScoringOptions(n_resamples=20))
    tasks = build_report(state.snapshot(), source="demo", generated_at="now").tasks
    entities = tasks.loc[tasks["consensus:entities"] != "", "consensus:entities"]
    assert entities.str.fullmatch(r"(?:(?:PER|ORG|no span) \[\d+-\d+\](?:; )?)+").all()
    topics = tasks["consensus:topics"]
    assert (topics == "").sum() == 0 and topics.str.startswith("none above 0.5: ").sum() > 0
    chosen = topics[~topics.str.startswith("none")]
    assert chosen.str.fullmatch(r"(?:(?:price|service|quality|delivery) \((?:0\.[5-9]\d|1\.00)\)(?:, )?)+").all()
