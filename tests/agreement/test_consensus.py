"""Consensus: majority vote and Dawid-Skene against crowd-kit 1.4.2, and their invariances."""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.consensus import annotator_accuracy, dawid_skene, held_posterior, majority_vote
from tests.profiles import examples

# Recorded by tests/data/crowdkit_reference.py in an environment of its own (crowd-kit 1.4.2; the command is there).
REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "data" / "crowdkit_reference.json").read_text())


def _codes(project):
    """The project's annotations as codes: tasks and labels by their place among those used (crowd-kit's frame)."""
    rows, tasks, labels = np.array(project["rows"]), np.array(project["tasks"]), np.array(project["labels"])
    known = np.full(len(tasks), -1)
    for task, label in project["known"].items():
        known[np.searchsorted(tasks, int(task))] = np.searchsorted(labels, label)
    return np.searchsorted(tasks, rows[:, 0]), rows[:, 1], np.searchsorted(labels, rows[:, 2]), labels, known


@pytest.mark.parametrize("project", REFERENCE["projects"], ids=lambda p: p["name"])
def test_dawid_skene_is_crowd_kit_s(project):
    items, annotators, labels, names, known = _codes(project)
    fit = dawid_skene(items, annotators, labels, n_annotators=project["n_workers"], n_labels=len(names), known=known)
    assert names[fit.labels].tolist() == project["ds_labels"]
    np.testing.assert_allclose(fit.posterior, project["ds_probas"], atol=1e-3)  # 1e-10 here: crowd-kit's clip
    np.testing.assert_allclose(fit.priors, np.array(project["ds_priors"])[names], atol=1e-9)
    np.testing.assert_allclose(fit.confusion, np.array(project["ds_errors"])[:, names][:, :, names], atol=1e-9)
    assert fit.iterations == project["ds_iterations"] and fit.converged
    assert (fit.posterior[known >= 0].max(axis=1) == 1.0).all()  # ground truth kept


@pytest.mark.parametrize("project", REFERENCE["projects"], ids=lambda p: p["name"])
def test_majority_vote_is_crowd_kit_s_and_says_its_ties(project):
    items, _, labels, names, _ = _codes(project)
    vote = majority_vote(items, labels, n_labels=len(names))
    np.testing.assert_allclose(vote.posterior, project["mv_probas"], atol=1e-12)
    theirs = np.searchsorted(names, project["mv_labels"])
    assert (vote.labels == theirs)[~vote.ties].all() and vote.ties.any()
    # on a tie crowd-kit picks one of the tied labels; here the tie is said
    assert (vote.posterior[np.arange(len(theirs)), theirs] == vote.posterior.max(axis=1))[vote.ties].all()


def _simulate(seed, n_items, accuracies, n_labels=3, per_item=3):
    rng = np.random.default_rng(seed)
    truth = rng.integers(n_labels, size=n_items)
    items, annotators, labels = [], [], []
    for item in range(n_items):
        for who in rng.choice(len(accuracies), size=per_item, replace=False):
            right = rng.random() < accuracies[who]
            items.append(item)
            annotators.append(who)
            labels.append(truth[item] if right else (truth[item] + rng.integers(1, n_labels)) % n_labels)
    return np.array(items), np.array(annotators), np.array(labels), truth


def test_dawid_skene_recovers_each_annotator_s_accuracy_as_tasks_grow():
    accuracies = np.array([0.95, 0.85, 0.7, 0.55, 0.4])
    errors = {}
    for n_items in (100, 5000):
        for seed in (7, 8):
            items, annotators, labels, truth = _simulate(seed, n_items, accuracies)
            fit = dawid_skene(items, annotators, labels)
            said = [labels[annotators == w] == truth[items[annotators == w]] for w in range(5)]
            errors[n_items, seed] = np.abs(annotator_accuracy(fit) - [right.mean() for right in said])
    # at 5,000 items each annotator gives about 3,000 answers: an accuracy's sampling error is about 0.01, and the
    # estimate also carries the posteriors' uncertainty; at 100 items, about 60 answers, errors of 0.1 are usual
    assert max(errors[5000, seed].max() for seed in (7, 8)) < 0.04
    assert np.mean([errors[5000, seed] for seed in (7, 8)]) < np.mean([errors[100, seed] for seed in (7, 8)]) / 2


def test_a_few_steps_from_the_last_fit_come_near_the_fit_from_scratch():
    # live: an annotation more refits from the held parameters in a few steps; a pass fits from scratch (the batch)
    items, annotators, labels, _ = _simulate(3, 500, [0.9, 0.8, 0.7, 0.6])
    sizes = {"n_items": 500, "n_annotators": 4, "n_labels": 3}
    before = dawid_skene(items[:-1], annotators[:-1], labels[:-1], **sizes)
    batch = dawid_skene(items, annotators, labels, **sizes)
    live = dawid_skene(items, annotators, labels, start=before, n_iter=3, **sizes)
    assert 1 <= live.iterations <= 3
    assert (live.labels == batch.labels).mean() > 0.99 and np.abs(live.posterior - batch.posterior).max() < 0.1
    cold = dawid_skene(items, annotators, labels, n_iter=3, **sizes)  # the same few steps from majority vote
    assert np.abs(live.posterior - batch.posterior).mean() < np.abs(cold.posterior - batch.posterior).mean()


@st.composite
def annotations(draw):
    n_items, n_annotators, n_labels = draw(st.integers(1, 12)), draw(st.integers(1, 5)), draw(st.integers(2, 4))
    rows = draw(st.lists(st.tuples(st.integers(0, n_items - 1), st.integers(0, n_annotators - 1),
                                   st.integers(0, n_labels - 1)), min_size=1, max_size=40, unique_by=lambda r: r[:2]))
    items, annotators, labels = (np.array(column) for column in zip(*rows, strict=True))
    return items, annotators, labels, n_items, n_annotators, n_labels


@settings(max_examples=examples(60), deadline=None)
@given(annotations(), st.randoms(use_true_random=False))
def test_renaming_annotators_or_labels_changes_nothing(drawn, random):
    items, annotators, labels, n_items, n_annotators, n_labels = drawn
    fit = dawid_skene(items, annotators, labels, n_items=n_items, n_annotators=n_annotators, n_labels=n_labels)
    people = np.array(random.sample(range(n_annotators), n_annotators))
    names = np.array(random.sample(range(n_labels), n_labels))
    renamed = dawid_skene(items, people[annotators], names[labels], n_items=n_items, n_annotators=n_annotators,
                          n_labels=n_labels)
    np.testing.assert_allclose(renamed.posterior[:, names], fit.posterior, atol=1e-9)
    np.testing.assert_allclose(renamed.priors[names], fit.priors, atol=1e-9)
    np.testing.assert_allclose(annotator_accuracy(renamed)[people], annotator_accuracy(fit), atol=1e-9)
    vote, renamed_vote = (majority_vote(items, codes, n_items=n_items, n_labels=n_labels) for codes in
                          (labels, names[labels]))
    assert (renamed_vote.ties == vote.ties).all()
    assert (renamed_vote.labels[~vote.ties] == np.where(vote.labels >= 0, names[vote.labels], -1)[~vote.ties]).all()


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=30), st.integers(2, 5))
def test_identical_annotators_give_posterior_one_on_their_label(truth, n_annotators):
    truth = np.array(truth)
    items = np.repeat(np.arange(len(truth)), n_annotators)
    annotators = np.tile(np.arange(n_annotators), len(truth))
    fit = dawid_skene(items, annotators, truth[items], n_labels=4)
    assert (fit.labels == truth).all()
    assert (fit.posterior[np.arange(len(truth)), truth] > 1 - 1e-6).all()


def test_an_item_without_annotations_has_no_label_and_bad_codes_are_refused():
    fit = dawid_skene([0, 0, 2, 2], [0, 1, 0, 1], [1, 1, 0, 0], n_items=3)
    assert fit.labels.tolist() == [1, -1, 0] and fit.posterior[1].tolist() == [0.0, 0.0]
    assert majority_vote([0, 2], [1, 0], n_items=3).labels.tolist() == [1, -1, 0]
    with pytest.raises(ValueError, match="non-negative integer codes"):
        dawid_skene([0, -1], [0, 0], [0, 0])
    with pytest.raises(ValueError, match="past the 2 labels given"):
        dawid_skene([0, 1], [0, 0], [0, 2], n_labels=2)
    with pytest.raises(ValueError, match="one length"):
        majority_vote([0, 1], [0])
    with pytest.raises(ValueError, match="known must hold"):
        dawid_skene([0], [0], [0], known=[0, 1])


def test_a_start_in_which_an_answer_given_now_was_impossible_starts_from_majority_vote():
    before = dawid_skene([0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 1, 1], n_labels=3)  # nobody said 2
    assert (before.confusion[0, :, 2] == 0).all()
    after = dawid_skene([0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 1, 2], n_labels=3, start=before, n_iter=0)
    cold = dawid_skene([0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 1, 2], n_labels=3, n_iter=0)
    np.testing.assert_allclose(after.posterior, cold.posterior)
    assert after.posterior[1].sum() == pytest.approx(1.0) and after.labels[0] == 0
    with pytest.raises(ValueError, match="known must hold"):
        dawid_skene([0], [0], [0], known=[-2])


def test_a_held_fit_scores_an_item_as_one_more_e_step_would():
    # E-step: T_ik ∝ p_k ∏ π^w_kl (Dawid & Skene 1979, section 3), with the fit's final parameters
    items, annotators, labels, _ = _simulate(4, 300, [0.9, 0.75, 0.6])
    fit = dawid_skene(items, annotators, labels)
    one = items == 7
    held = held_posterior(fit, np.zeros(one.sum(), dtype=int), annotators[one], labels[one])[0]
    brute = fit.priors * np.prod([fit.confusion[w, :, l] for w, l in zip(annotators[one], labels[one], strict=True)],
                                 axis=0)
    assert held == pytest.approx(brute / brute.sum(), abs=1e-9)


def test_a_held_fit_leaves_out_what_it_cannot_weigh_and_keeps_what_is_known():
    fit = dawid_skene([0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 1, 1])
    # annotator 5 (the fit never saw them) beside annotator 0 on item 0; item 1 only has annotator 5
    posterior = held_posterior(fit, [0, 0, 1, 2], [0, 5, 5, 0], [1, 0, 0, 0], n_items=4, known=[-1, -1, 1, 0])
    assert posterior[0].argmax() == 1 and posterior[1].tolist() == [1.0, 0.0]  # its one label's share
    assert posterior[2].tolist() == [0.0, 1.0]  # known
    assert posterior[3].tolist() == [0.0, 0.0]  # nothing said of it: no label, whatever is known
    with pytest.raises(ValueError, match="known must hold"):
        held_posterior(fit, [0], [0], [0], known=[3])


def test_a_fit_without_labels_gives_every_item_an_empty_posterior():
    # what a control whose every result was skipped leaves: items, no labels (a real chat export reached this)
    fit = dawid_skene([], [], [], n_items=3, n_annotators=2, n_labels=0)
    assert fit.labels.tolist() == [-1, -1, -1] and fit.posterior.shape == (3, 0) and fit.iterations == 0
    held = held_posterior(fit, [0, 2], [0, 1], [0, 0], n_items=3)
    assert held.shape == (3, 0)
    vote = majority_vote([], [], n_items=2, n_labels=0)
    assert vote.labels.tolist() == [-1, -1] and vote.ties.tolist() == [False, False]
