"""Consensus: majority vote and Dawid-Skene against crowd-kit 1.4.2, its posterior mode under a prior against
scipy's optimiser, and their invariances."""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.special import log_softmax, logsumexp

from agreement.consensus import Consensus, annotator_accuracy, dawid_skene, held_posterior, majority_vote
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


def test_with_every_item_known_the_confusion_is_the_prior_s_mode_raykar_s_formula():
    # Raykar et al. (2010) with Beta(3, 2) priors on one annotator's sensitivity and specificity: sensitivity
    # (a1 - 1 + sum_i mu_i y_i) / (a1 + a2 - 2 + sum_i mu_i), specificity likewise. Five items of known label
    # 1, 1, 1, 0, 0, on which the annotator said 1, 1, 0, 0, 1: sensitivity (2 + 2) / (3 + 3) = 2/3, specificity
    # (2 + 1) / (3 + 2) = 3/5. Here: pseudo-counts (2, 1), the concentrations minus one.
    fit = dawid_skene(np.arange(5), np.zeros(5, dtype=int), [1, 1, 0, 0, 1], known=[1, 1, 1, 0, 0], prior=(2, 1))
    np.testing.assert_allclose(fit.confusion[0], [[3 / 5, 2 / 5], [1 / 3, 2 / 3]], atol=1e-12)
    np.testing.assert_allclose(fit.priors, [2 / 5, 3 / 5], atol=1e-12)
    # maximum likelihood: the counts alone (2/3 and 1/2)
    plain = dawid_skene(np.arange(5), np.zeros(5, dtype=int), [1, 1, 0, 0, 1], known=[1, 1, 1, 0, 0])
    np.testing.assert_allclose(plain.confusion[0], [[1 / 2, 1 / 2], [1 / 3, 2 / 3]], atol=1e-12)


def _log_posterior(items, annotators, labels, priors, confusion, prior):
    """The log posterior the EM climbs, written out: each item's marginal likelihood, and the prior's density."""
    logs = np.log(confusion[annotators, :, labels])  # (annotations, true labels)
    per_item = np.stack([np.bincount(items, weights=logs[:, k]) for k in range(len(priors))], axis=1)
    off = prior[1] / max(len(np.unique(labels)) - 1, 1)  # b shared among the other labels anybody said
    weights = np.where(np.eye(len(priors), dtype=bool), prior[0], off)
    return logsumexp(np.log(priors) + per_item, axis=1).sum() + (weights * np.log(confusion)).sum()


def _unpack(theta, n_w, n_k):
    return (np.exp(log_softmax(theta[:n_k])),
            np.exp(log_softmax(theta[n_k:].reshape(n_w, n_k, n_k), axis=2)))


@pytest.mark.parametrize(("seed", "n_labels", "prior"), [(1, 2, (2, 1)), (2, 3, (2, 1)), (3, 3, (4, 1)),
                                                         (4, 2, (1, 1))])
def test_the_em_under_a_prior_stops_at_a_mode_scipy_s_optimiser_cannot_climb_from(seed, n_labels, prior):
    # 30 items, 3 annotators who each answer every item (so each uses every label and no cell is left out); with
    # fewer, a label's prior may head for 0, a mode on the boundary that the EM nears ever more slowly
    rng = np.random.default_rng(seed)
    truth = rng.integers(n_labels, size=30)
    items, annotators = np.repeat(np.arange(30), 3), np.tile(np.arange(3), 30)
    right = rng.random(90) < np.array([0.9, 0.75, 0.6])[annotators]
    labels = np.where(right, truth[items], (truth[items] + rng.integers(1, n_labels, size=90)) % n_labels)
    assert all(len(np.unique(labels[annotators == w])) == n_labels for w in range(3))

    def loss(theta):
        return -_log_posterior(items, annotators, labels, *_unpack(theta, 3, n_labels), prior)

    def climbed(priors, confusion):
        theta = np.concatenate([np.log(priors), np.log(confusion).ravel()])
        return minimize(loss, theta, method="BFGS", options={"gtol": 1e-10})

    # the EM's end is a mode: the optimiser started there finds nothing higher and stays
    fit = dawid_skene(items, annotators, labels, prior=prior, n_iter=20000, tol=0.0)
    ours = _log_posterior(items, annotators, labels, fit.priors, fit.confusion, prior)
    there = climbed(fit.priors, fit.confusion)
    assert -there.fun == pytest.approx(ours, abs=1e-8)
    np.testing.assert_allclose(_unpack(there.x, 3, n_labels)[1], fit.confusion, atol=1e-4)
    # and a mode the optimiser finds from random starts is one the EM, started there, stays at (its M-step is the
    # mode's condition); the EM from majority vote may end at a lower mode than the best (as EM does)
    starts = [minimize(loss, rng.normal(size=n_labels + 3 * n_labels ** 2), method="BFGS") for _ in range(4)]
    best = climbed(*_unpack(min(starts, key=lambda result: result.fun).x, 3, n_labels))
    priors, confusion = _unpack(best.x, 3, n_labels)
    held = Consensus(labels=np.zeros(0, dtype=np.intp), posterior=np.zeros((0, n_labels)), priors=priors,
                     confusion=confusion, answers=np.zeros((3, n_labels)), iterations=0, converged=True)
    again = dawid_skene(items, annotators, labels, prior=prior, start=held, n_iter=20000, tol=0.0)
    assert -best.fun >= ours - 1e-8
    assert _log_posterior(items, annotators, labels, again.priors, again.confusion, prior) == pytest.approx(
        -best.fun, abs=1e-7)
    np.testing.assert_allclose(again.confusion, confusion, atol=1e-4)


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_each_em_step_under_a_prior_raises_the_log_posterior(data):
    items, annotators, labels, n_items, n_annotators, n_labels = data.draw(annotations())
    prior = data.draw(st.tuples(st.sampled_from([0.5, 1.0, 2.0, 4.0]), st.sampled_from([0.5, 1.0, 2.0])))
    said = np.unique(items)
    values = []
    for steps in range(1, 8):
        fit = dawid_skene(items, annotators, labels, n_items=n_items, n_annotators=n_annotators, n_labels=n_labels,
                          prior=prior, n_iter=steps, tol=0.0)
        # the log posterior over the cells each annotator's answers use (the confusion's others are 0)
        used = fit.confusion > 0
        confusion = np.where(used, fit.confusion, 1.0)
        off = prior[1] / max(len(np.unique(labels)) - 1, 1)  # b shared among the other labels anybody said
        weights = np.where(np.eye(n_labels, dtype=bool), prior[0], off)[None] * used
        value = sum(logsumexp(np.log(np.maximum(fit.priors, 1e-300)) + sum(
            np.log(confusion[w, :, l]) for w, l in zip(annotators[items == item], labels[items == item],
                                                        strict=True))) for item in said)
        values.append(value + (weights * np.log(confusion)).sum())
    assert all(later >= earlier - 1e-9 for earlier, later in zip(values, values[1:], strict=False))


def test_a_prior_must_be_two_pseudo_counts_of_at_least_zero():
    for prior in ((-1, 0), (1, float("nan")), (float("inf"), 1)):
        with pytest.raises(ValueError, match="two finite pseudo-counts"):
            dawid_skene([0, 0], [0, 1], [0, 1], prior=prior)


def test_a_prior_shrinks_a_thinly_seen_annotator_toward_its_mean_and_keeps_the_majority_s_labels():
    # beside two annotators who agree on twenty items, a third seen on two, wrong on both: by maximum likelihood
    # they are certainly wrong (accuracy 0); under the prior each of their rows holds one answer against the
    # pseudo-counts, about (0 + 2) / (0 + 2 + 1 + 1) = 1/2 on the diagonal
    items = np.concatenate([np.repeat(np.arange(20), 2), [0, 1]])
    annotators = np.concatenate([np.tile([0, 1], 20), [2, 2]])
    labels = np.concatenate([np.repeat(np.arange(20) % 2, 2), [1, 0]])
    plain = dawid_skene(items, annotators, labels)
    shrunk = dawid_skene(items, annotators, labels, prior=(2, 1))
    np.testing.assert_allclose(plain.confusion[2], [[0, 1], [1, 0]], atol=1e-6)
    np.testing.assert_allclose(shrunk.confusion[2], [[0.5, 0.5], [0.5, 0.5]], atol=0.01)  # items 0, 1: nearly sure
    assert (plain.labels == np.arange(20) % 2).all() and (shrunk.labels == plain.labels).all()
    # the two who agree: ten answers a row against the pseudo-counts, about (10 + 2) / (10 + 2 + 1) on the diagonal
    np.testing.assert_allclose(shrunk.confusion[0], [[12 / 13, 1 / 13], [1 / 13, 12 / 13]], atol=0.01)


@pytest.mark.parametrize("n_labels", [3, 20])
def test_a_row_weighs_the_same_pseudo_counts_whatever_the_number_of_labels(n_labels):
    # every item's label known (the M-step alone); annotator 1 is right on ten items of label 0 and wrong on the one
    # item of each other label j, where they say j % (n_labels - 1) + 1 (so they use every label). A row's
    # pseudo-counts: 2 on the diagonal, 1 shared among the n_labels - 1 cells off it.
    truth = np.concatenate([np.zeros(10, dtype=int), np.arange(1, n_labels)])
    n_items = len(truth)
    said = np.concatenate([np.zeros(10, dtype=int), np.arange(1, n_labels) % (n_labels - 1) + 1])
    items = np.concatenate([np.repeat(np.arange(n_items), 3), np.arange(n_items)])
    annotators = np.concatenate([np.tile([0, 2, 3], n_items), np.ones(n_items, dtype=int)])
    labels = np.concatenate([np.repeat(truth, 3), said])
    fit = dawid_skene(items, annotators, labels, known=truth, prior=(2, 1))
    # label 0's row: ten right answers, (10 + 2) / (10 + 2 + 1)
    assert fit.confusion[1, 0, 0] == pytest.approx(12 / 13, abs=1e-12)
    # label 1's row: one wrong answer (label 2): (0 + 2) / (1 + 2 + 1) on the diagonal, (1 + 1 / (L - 1)) / 4 on it
    assert fit.confusion[1, 1, 1] == pytest.approx(2 / 4, abs=1e-12)
    assert fit.confusion[1, 1, 2] == pytest.approx((1 + 1 / (n_labels - 1)) / 4, abs=1e-12)
    np.testing.assert_allclose(fit.confusion.sum(axis=2), 1.0, atol=1e-12)


def test_a_label_an_annotator_never_used_keeps_a_zero_in_their_confusion_under_a_prior():
    # annotator 1 says 0 or 1, never 2: their column of label 2 stays 0 and each row sums to 1 over labels 0 and 1
    items = np.repeat(np.arange(6), 3)
    annotators = np.tile([0, 1, 2], 6)
    labels = np.array([0, 0, 0, 1, 1, 1, 2, 1, 2, 0, 0, 0, 1, 1, 1, 2, 0, 2])
    fit = dawid_skene(items, annotators, labels, prior=(2, 1))
    assert (fit.confusion[1, :, 2] == 0).all() and (fit.confusion[1, :, :2] > 0).all()
    np.testing.assert_allclose(fit.confusion.sum(axis=2), 1.0, atol=1e-12)


@st.composite
def annotations(draw):
    n_items, n_annotators, n_labels = draw(st.integers(1, 12)), draw(st.integers(1, 5)), draw(st.integers(2, 4))
    rows = draw(st.lists(st.tuples(st.integers(0, n_items - 1), st.integers(0, n_annotators - 1),
                                   st.integers(0, n_labels - 1)), min_size=1, max_size=40, unique_by=lambda r: r[:2]))
    items, annotators, labels = (np.array(column) for column in zip(*rows, strict=True))
    return items, annotators, labels, n_items, n_annotators, n_labels


@settings(max_examples=examples(60), deadline=None)
@given(annotations(), st.randoms(use_true_random=False), st.sampled_from([(0, 0), (2, 1), (0.5, 3)]))
def test_renaming_annotators_or_labels_changes_nothing(drawn, random, prior):
    items, annotators, labels, n_items, n_annotators, n_labels = drawn
    fit = dawid_skene(items, annotators, labels, n_items=n_items, n_annotators=n_annotators, n_labels=n_labels,
                      prior=prior)
    people = np.array(random.sample(range(n_annotators), n_annotators))
    names = np.array(random.sample(range(n_labels), n_labels))
    renamed = dawid_skene(items, people[annotators], names[labels], n_items=n_items, n_annotators=n_annotators,
                          n_labels=n_labels, prior=prior)
    np.testing.assert_allclose(renamed.posterior[:, names], fit.posterior, atol=1e-9)
    np.testing.assert_allclose(renamed.priors[names], fit.priors, atol=1e-9)
    np.testing.assert_allclose(annotator_accuracy(renamed)[people], annotator_accuracy(fit), atol=1e-9)
    vote, renamed_vote = (majority_vote(items, codes, n_items=n_items, n_labels=n_labels) for codes in
                          (labels, names[labels]))
    assert (renamed_vote.ties == vote.ties).all()
    assert (renamed_vote.labels[~vote.ties] == np.where(vote.labels >= 0, names[vote.labels], -1)[~vote.ties]).all()


@settings(max_examples=examples(60), deadline=None)
@given(annotations(), st.integers(1, 3), st.randoms(use_true_random=False), st.sampled_from([(0, 0), (2, 1)]))
def test_label_codes_nobody_said_change_nothing(drawn, extra, random, prior):
    # a live state keeps the code of a label whose last answer was deleted, and a config's unused category has a
    # code too: the fit of the same answers must not depend on them (the live state must equal a batch read)
    items, annotators, labels, n_items, n_annotators, n_labels = drawn
    fit = dawid_skene(items, annotators, labels, n_items=n_items, n_annotators=n_annotators, n_labels=n_labels,
                      prior=prior)
    wider = np.array(sorted(random.sample(range(n_labels + extra), n_labels)))  # the same labels among unused codes
    spread = dawid_skene(items, annotators, wider[labels], n_items=n_items, n_annotators=n_annotators,
                         n_labels=n_labels + extra, prior=prior)
    np.testing.assert_allclose(spread.posterior[:, wider], fit.posterior, atol=1e-7)
    np.testing.assert_allclose(spread.confusion[np.ix_(range(n_annotators), wider, wider)], fit.confusion, atol=1e-7)
    np.testing.assert_allclose(annotator_accuracy(spread), annotator_accuracy(fit), atol=1e-7)


@settings(max_examples=examples(60), deadline=None)
@given(annotations(), st.data())
def test_with_every_item_known_an_annotator_s_accuracy_is_their_share_of_right_answers(drawn, data):
    # maximum likelihood, every answered item's label known: the M-step alone, so the estimate is counted, not
    # estimated: the share of each annotator's answers that are the item's label; ``answers`` counts them by label
    items, annotators, labels, n_items, n_annotators, n_labels = drawn
    truth = np.array(data.draw(st.lists(st.integers(0, n_labels - 1), min_size=n_items, max_size=n_items)))
    fit = dawid_skene(items, annotators, labels, n_items=n_items, n_annotators=n_annotators, n_labels=n_labels,
                      known=truth)
    for who in range(n_annotators):
        mine = annotators == who
        counted = np.bincount(truth[items[mine]], minlength=n_labels)
        np.testing.assert_allclose(fit.answers[who], counted, atol=1e-9)
        right = (labels[mine] == truth[items[mine]]).mean() if mine.any() else np.nan
        np.testing.assert_allclose(annotator_accuracy(fit)[who], right, atol=1e-8)


@settings(max_examples=examples(60), deadline=None)
@given(annotations(), st.sampled_from([(0, 0), (2, 1)]))
def test_an_annotator_s_expected_answers_sum_to_their_answers_and_bound_the_accuracy(drawn, prior):
    items, annotators, labels, n_items, n_annotators, n_labels = drawn
    fit = dawid_skene(items, annotators, labels, n_items=n_items, n_annotators=n_annotators, n_labels=n_labels,
                      prior=prior)
    np.testing.assert_allclose(fit.answers.sum(axis=1), np.bincount(annotators, minlength=n_annotators), atol=1e-9)
    accuracy = annotator_accuracy(fit)
    answered = np.bincount(annotators, minlength=n_annotators) > 0
    assert np.isnan(accuracy[~answered]).all()
    assert ((accuracy[answered] >= -1e-12) & (accuracy[answered] <= 1 + 1e-12)).all()


def test_a_newcomer_right_on_a_few_items_of_one_label_reads_accurate():
    # three annotators, 85% right on 300 items of three balanced labels; a fourth joins and labels five items of
    # true label 0 that the three agreed on, rightly. Her rows of labels 1 and 2 are informed by nothing: weighted by
    # the label priors her accuracy would read about 1/3 (a false "unreliable"); on her own items it reads what she did
    items, annotators, labels, truth = _simulate(0, 300, [0.85, 0.85, 0.85], per_item=3)
    mine = np.flatnonzero((truth == 0) & (np.bincount(items, weights=labels == 0, minlength=300) == 3))[:5]
    items = np.concatenate([items, mine])
    annotators = np.concatenate([annotators, np.full(5, 3)])
    labels = np.concatenate([labels, np.zeros(5, dtype=int)])
    for prior in ((0, 0), (2, 1)):
        fit = dawid_skene(items, annotators, labels, prior=prior)
        assert (fit.labels[mine] == 0).all()
        assert fit.priors @ fit.confusion[3].diagonal() < 0.4  # the rule this replaces
        assert annotator_accuracy(fit)[3] > 0.95
        np.testing.assert_allclose(fit.answers[3], [5, 0, 0], atol=0.05)


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
