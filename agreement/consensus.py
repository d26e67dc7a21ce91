"""Consensus: each item's label from several annotators, and whom to trust.

Majority vote counts each item's labels. Dawid and Skene (1979) estimate, without ground truth, each annotator's
confusion matrix :math:`\\pi^w_{kl} = P(\\text{annotator } w \\text{ says } l \\mid \\text{true label } k)`, the label
priors :math:`p_k`, and each item's posterior over its true label, by expectation-maximisation:

* E-step: :math:`T_{ik} \\propto p_k \\prod_{(w, l) \\in i} \\pi^w_{kl}` (in logarithms, each row shifted by its
  largest value before exponentiation);
* M-step: :math:`p_k = \\frac{1}{I} \\sum_i T_{ik}` and
  :math:`\\pi^w_{kl} \\propto \\sum_{i: w \\text{ said } l \\text{ on } i} T_{ik}`, normalised over :math:`l`.

With a prior, each annotator's confusion rows are estimated as a posterior mode rather than by maximum likelihood
(as Raykar et al. 2010 do with Beta and Dirichlet priors): a row :math:`\\pi^w_{k\\cdot}` over the :math:`L` labels
anybody said (a label code nobody used, such as a config's category no one chose, changes nothing)
has a Dirichlet prior of concentration :math:`1 + a` on the diagonal and :math:`1 + b / (L - 1)` off it, restricted to
the labels ``w`` used, so that the M-step adds ``prior = (a, b)``, ``b`` shared evenly among the other labels, to the
expected counts before normalising,

* :math:`\\pi^w_{kl} \\propto a [k = l] + \\frac{b}{L - 1} [k \\neq l]
  + \\sum_{i: w \\text{ said } l \\text{ on } i} T_{ik}`,

and the EM climbs the log posterior, the log likelihood plus
:math:`\\sum_{w, k, l} (a [k = l] + \\frac{b}{L - 1} [k \\neq l]) \\log \\pi^w_{kl}` (the prior's log density up to a
constant), towards a mode of it. A row weighs at most ``a + b`` pseudo-counts however many labels there are, and an
annotator seen on no item of a true label has that row at the prior's mode, right with probability about
:math:`a / (a + b)`, instead of a row of zeros and a one that a refit on a few more items can overturn; an item such
an annotator labelled keeps its consensus from refit to refit more often. ``prior=(0, 0)`` is Dawid and Skene's
maximum likelihood.

As Dawid and Skene do (section 3), the EM starts from majority vote's proportions; it stops when the evidence
lower bound per annotation gains less than ``tol`` (under a prior, the bound plus the prior: :func:`_evidence`), or
after ``n_iter`` steps, as crowd-kit's ``DawidSkene`` does
(its cells of a (worker, label) pair that was used are clipped at 1e-10 before normalising, as here), so that the
two agree within numerical noise (``tests/agreement/test_consensus.py``). Items whose ground truth is known keep
it: their posterior is that label with probability 1 at every step (semi-supervised).

An annotator's estimated accuracy is the expected share of their own answers that are the true label: their
confusion diagonal weighted by the true labels of the items they answered, in expectation,
:math:`\\sum_k n^w_k \\pi^w_{kk} / \\sum_k n^w_k` with :math:`n^w_k = \\sum_{i \\in w} T_{ik}` (by maximum
likelihood, the mean posterior of the labels they said). It estimates, without ground truth, what an accuracy on
ground truth measures on their items. Weighting by the label priors instead, :math:`\\sum_k p_k \\pi^w_{kk}`, counts
rows of true labels the annotator never met, which no answer informs: a newcomer right on five items of one label
of three would read about 0.3.

Everything works on codes: ``items``, ``annotators`` and ``labels`` are integer arrays of one annotation each.
Items of which the same annotators said the same labels have the same posterior at every step, so the EM runs once
per such pattern, weighted by its items: each step costs O(patterns x labels), not O(annotations x labels), and
the result is the same.

A. P. Dawid and A. M. Skene, "Maximum likelihood estimation of observer error-rates using the EM algorithm",
Journal of the Royal Statistical Society C 28(1), 20-28 (1979).

V. C. Raykar, S. Yu, L. H. Zhao, G. H. Valadez, C. Florin, L. Bogoni and L. Moy, "Learning from crowds", Journal
of Machine Learning Research 11, 1297-1322 (2010).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from agreement.uniques import narrowest

__all__ = ["Consensus", "MajorityVote", "annotator_accuracy", "dawid_skene", "held_posterior", "majority_vote"]

CLIP = 1e-10
"""Smallest confusion cell of a (annotator, label) pair that was used, before normalising (as crowd-kit)."""


@dataclass(frozen=True)
class MajorityVote:
    """Majority vote on each item.

    Attributes
    ----------
    labels : ndarray of int, shape (items,)
        The most frequent label's code (the lowest code among tied ones); -1 for an item without labels.
    posterior : ndarray of float, shape (items, labels)
        Each label's share of the item's annotations.
    ties : ndarray of bool, shape (items,)
        Whether two or more labels share the most votes.
    """

    labels: NDArray[np.intp]
    posterior: NDArray[np.float64]
    ties: NDArray[np.bool_]


@dataclass(frozen=True)
class Consensus:
    """A Dawid-Skene fit.

    Attributes
    ----------
    labels : ndarray of int, shape (items,)
        Each item's most probable label (-1 for an item without annotations).
    posterior : ndarray of float, shape (items, labels)
        Each item's posterior over its true label (zeros for an item without annotations).
    priors : ndarray of float, shape (labels,)
    confusion : ndarray of float, shape (annotators, labels, labels)
        ``confusion[w, k, l]``: the probability that annotator ``w`` says ``l`` when the true label is ``k`` (over the
        labels ``w`` used; a row of a true label is uniform over them where nothing informs it).
    answers : ndarray of float, shape (annotators, labels)
        ``answers[w, k]``: annotator ``w``'s answers on items whose true label is ``k``, in expectation under the
        posteriors (a row sums to the annotator's number of answers).
    iterations : int
        EM steps taken.
    converged : bool
        Whether the evidence lower bound stopped growing by ``tol`` before ``n_iter`` steps.
    """

    labels: NDArray[np.intp]
    posterior: NDArray[np.float64]
    priors: NDArray[np.float64]
    confusion: NDArray[np.float64]
    answers: NDArray[np.float64]
    iterations: int
    converged: bool


def _codes(items: ArrayLike, annotators: ArrayLike | None, labels: ArrayLike, n_items: int | None,
           n_annotators: int | None, n_labels: int | None) -> tuple[NDArray[np.intp], ...]:
    """The annotations' codes, checked, with the numbers of items, annotators and labels."""
    i = np.asarray(items)
    w = np.zeros(len(i), dtype=np.intp) if annotators is None else np.asarray(annotators)
    l_ = np.asarray(labels)
    if not (i.ndim == w.ndim == l_.ndim == 1 and len(i) == len(w) == len(l_)):
        raise ValueError("items, annotators and labels must be one-dimensional arrays of one length, "
                         "one entry per annotation.")
    for name, codes in (("items", i), ("annotators", w), ("labels", l_)):
        if len(codes) and (not np.issubdtype(codes.dtype, np.integer) or codes.min() < 0):
            raise ValueError(f"{name} must be non-negative integer codes.")
    sizes = []
    for name, codes, given in (("items", i, n_items), ("annotators", w, n_annotators), ("labels", l_, n_labels)):
        least = int(codes.max()) + 1 if len(codes) else 0
        if given is not None and given < least:
            raise ValueError(f"A code of {name} is {least - 1}, past the {given} {name} given.")
        sizes.append(least if given is None else given)
    return i.astype(np.intp), w.astype(np.intp), l_.astype(np.intp), *sizes  # type: ignore[return-value]


def majority_vote(items: ArrayLike, labels: ArrayLike, *, n_items: int | None = None,
                  n_labels: int | None = None) -> MajorityVote:
    """Majority vote: each item's most frequent label, its shares, and whether it is a tie.

    Examples
    --------
    >>> vote = majority_vote([0, 0, 0, 1, 1], [2, 2, 0, 0, 1])
    >>> vote.labels.tolist(), vote.ties.tolist(), vote.posterior[0].round(3).tolist()
    ([2, 0], [False, True], [0.333, 0.0, 0.667])
    """
    i, _, l_, n_i, _, n_l = _codes(items, None, labels, n_items, None, n_labels)
    counts = np.bincount(i * n_l + l_, minlength=n_i * n_l).reshape(n_i, n_l).astype(np.float64)
    totals = counts.sum(axis=1)
    posterior = np.divide(counts, totals[:, None], out=np.zeros_like(counts), where=totals[:, None] > 0)
    most = counts.max(axis=1, initial=0.0)
    ties = (counts == most[:, None]).sum(axis=1) > 1
    winners = np.where(totals > 0, counts.argmax(axis=1) if n_l else -1, -1)
    return MajorityVote(labels=winners.astype(np.intp), posterior=posterior, ties=ties & (totals > 0))


def _expected_counts(posterior: NDArray[np.float64], at: NDArray[np.intp], weight: NDArray[np.float64],
                     pair: NDArray[np.intp], n_w: int, n_l: int) -> NDArray[np.float64]:
    """Each annotator's expected answers ``[w, l, k]``: how often ``w`` said ``l`` on items of true label ``k``."""
    n_k = posterior.shape[1]
    sums = np.empty((n_w * n_l, n_k))
    weights = posterior[at] * weight[at, None]
    for k in range(n_k):
        sums[:, k] = np.bincount(pair, weights=weights[:, k], minlength=n_w * n_l)
    return sums.reshape(n_w, n_l, n_k)


def _m_step(posterior: NDArray[np.float64], at: NDArray[np.intp], weight: NDArray[np.float64],
            pair: NDArray[np.intp], used: NDArray[np.bool_], n_w: int, n_l: int,
            prior: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each annotator's confusion ``[w, k, l]`` from the posteriors (the M-step).

    ``at`` is each annotation's pattern and ``weight`` how many items share it; ``prior[l, k]`` is added to the
    expected count of each (annotator, label) pair that was used, and the sum clipped at :data:`CLIP`.
    """
    n_k = posterior.shape[1]
    sums = (_expected_counts(posterior, at, weight, pair, n_w, n_l) + prior).reshape(n_w * n_l, n_k)
    sums = np.where(used[:, None], np.maximum(sums, CLIP), 0.0).reshape(n_w, n_l, n_k)
    totals = sums.sum(axis=1, keepdims=True)
    confusion = np.divide(sums, totals, out=np.zeros_like(sums), where=totals > 0)
    return confusion.transpose(0, 2, 1)  # [w, true k, said l]


def _log_terms(confusion: NDArray[np.float64], w: NDArray[np.intp], l_: NDArray[np.intp]) -> NDArray[np.float64]:
    """``log confusion[w, :, l]`` of each annotation, shape (annotations, labels); -inf where a cell is 0."""
    with np.errstate(divide="ignore"):
        return np.log(confusion[w, :, l_])


def _e_step(priors: NDArray[np.float64], logs: NDArray[np.float64], i: NDArray[np.intp], n_i: int,
            known: NDArray[np.intp], *, in_play: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """Each item's posterior (E-step); items with a known label keep it.

    A label out of ``in_play`` (nobody said it and no annotated item is known to have it) gets none: without it,
    the prior's clip would give it about ``CLIP``, and a code nobody said would move the fit.
    """
    n_k = len(priors)
    log_priors = np.log(np.maximum(priors, CLIP))
    if in_play is not None:
        log_priors[~in_play] = -np.inf
    scores = np.empty((n_i, n_k))
    for k in range(n_k):
        scores[:, k] = np.bincount(i, weights=logs[:, k], minlength=n_i)
    scores += log_priors
    with np.errstate(invalid="ignore"):  # no labels at all: each row is empty, and so is its posterior
        shifted = np.exp(scores - scores.max(axis=1, keepdims=True, initial=-np.inf))
    total = shifted.sum(axis=1, keepdims=True)
    posterior = np.divide(shifted, total, out=np.zeros_like(shifted), where=(total > 0) & np.isfinite(total))
    return _with_known(posterior, known)


def _with_known(posterior: NDArray[np.float64], known: NDArray[np.intp]) -> NDArray[np.float64]:
    """The posterior with each item of known label (``known >= 0``) set to that label."""
    rows = np.flatnonzero(known >= 0)
    if len(rows):
        posterior[rows] = 0.0
        posterior[rows, known[rows]] = 1.0
    return posterior


def _evidence(posterior: NDArray[np.float64], priors: NDArray[np.float64], logs: NDArray[np.float64],
              at: NDArray[np.intp], weight: NDArray[np.float64], prior_term: float | None = None) -> float:
    """The stopping rule's evidence lower bound, per annotation.

    Without a prior, as crowd-kit computes it, so that the two stop at the same step: per annotation
    :math:`\\sum_k T_{ik} (\\log \\pi^w_{kl} + \\log p_k)`, plus the posteriors' entropy, priors and posteriors taken at
    least :data:`CLIP` inside the logarithms, and a term of probability 0 counting 0. That counts an item's
    :math:`\\log p_k` once per annotation, and the sum can fall from one step to the next. Under a prior
    (``prior_term``, its log density: :func:`_log_prior`), the bound itself, which no EM step lowers: per item
    :math:`\\sum_k T_{ik} \\log p_k` once, per annotation :math:`\\sum_k T_{ik} \\log \\pi^w_{kl}`, the posteriors'
    entropy and the prior.
    """
    weights = posterior[at]
    counted = weight[at]
    # products and sums without BLAS: its threads spin for cores that Label Studio holds
    if prior_term is None:
        terms = np.where(weights > 0, weights * (logs + np.log(np.maximum(priors, CLIP))), 0.0).sum(axis=1)
        clipped = np.maximum(posterior, CLIP)
        entropy = -(clipped * np.log(clipped)).sum(axis=1)
        return float(((terms * counted).sum() + (entropy * weight).sum()) / counted.sum())
    terms = np.where(weights > 0, weights * logs, 0.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # a posterior of 0 counts 0
        per_item = np.where(posterior > 0, posterior * (np.log(priors) - np.log(posterior)), 0.0).sum(axis=1)
    return float(((terms * counted).sum() + (per_item * weight).sum() + prior_term) / counted.sum())


def _log_prior(confusion: NDArray[np.float64], prior: NDArray[np.float64]) -> float:
    """The confusion prior's log density up to a constant: the pseudo-counts times the log confusion, summed."""
    weights = np.broadcast_to(prior.T, confusion.shape)  # prior[l, k] weighs confusion[w, k, l]
    on = (weights > 0) & (confusion > 0)
    return float((weights[on] * np.log(confusion[on])).sum())


def _prior_matrix(prior: tuple[float, float], n_l: int, *, n_said: int) -> NDArray[np.float64]:
    """The pseudo-counts ``[said l, true k]`` of a prior ``(a, b)``: ``a`` on the diagonal, ``b / (n_said - 1)`` off.

    ``n_said`` is the number of labels anybody said: a label code nobody used (a config's category left unused,
    or a label whose last answer was deleted) takes no share of ``b``.
    """
    diagonal, off = (float(value) for value in prior)
    if not (np.isfinite(diagonal) and np.isfinite(off) and diagonal >= 0 and off >= 0):
        raise ValueError(f"prior must be two finite pseudo-counts of at least 0 (diagonal, off-diagonal); got "
                         f"{prior!r}.")
    matrix = np.full((n_l, n_l), off / max(n_said - 1, 1))
    np.fill_diagonal(matrix, diagonal)
    return matrix


def _priors(posterior: NDArray[np.float64], weight: NDArray[np.float64]) -> NDArray[np.float64]:
    """The label priors: the items' mean posterior (each pattern counted for its items)."""
    return (posterior * weight[:, None]).sum(axis=0) / weight.sum()


def _patterns(i: NDArray[np.intp], pair: NDArray[np.intp], known: NDArray[np.intp],
              n_i: int) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.intp], NDArray[np.intp],
                                 NDArray[np.intp]]:
    """Items grouped by what was said of them, with their known label.

    Items grouped by what was said of them: items with the same (annotator, label) pairs and known label.

    Such items have the same posterior at every step, so the EM runs once per pattern, each weighted by its items
    (a project of many items has few patterns: 5 annotators and 5 labels allow 3,125).

    Returns
    -------
    item_pattern : ndarray of int, shape (items,)
        Each item's pattern (-1: no annotation).
    weight : ndarray of float, shape (patterns,)
        How many items share each pattern.
    known : ndarray of int, shape (patterns,)
    at, pairs : ndarray of int, shape (pattern annotations,)
        Each pattern's annotations: its pattern and its (annotator, label) pair.
    """
    n_pairs = int(pair.max()) + 1 if len(pair) else 1
    # each item's pairs side by side, held in the narrowest type (the sort's order is let go at once)
    pair_sorted = narrowest(pair[np.argsort(i.astype(np.int64) * n_pairs + pair, kind="stable")], n_pairs)
    per_item = np.bincount(i, minlength=n_i)
    starts = np.concatenate([[0], np.cumsum(per_item)[:-1]]) if n_i else np.zeros(0, dtype=np.intp)
    item_pattern = np.full(n_i, -1, dtype=np.intp)
    weights, knowns, ats, pairs, base = [], [], [], [], 0
    for size in np.unique(per_item[per_item > 0]).tolist():
        members = np.flatnonzero(per_item == size)
        block = np.column_stack([pair_sorted[starts[members][:, None] + np.arange(size)], known[members] + 1])
        radix = np.array([n_pairs] * size + [int(known.max(initial=-1)) + 2], dtype=object)
        if np.prod(radix) < 2**62:  # each row one integer: a sort of numbers, not of rows
            scale = np.cumprod(np.concatenate([[1], radix[:-1].astype(np.int64)])).astype(np.int64)
            keys = block.astype(np.int64) @ scale
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            unique = block[first]
        else:
            unique, inverse = np.unique(block, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        item_pattern[members] = base + inverse
        weights.append(np.bincount(inverse, minlength=len(unique)).astype(np.float64))
        knowns.append(unique[:, size] - 1)
        ats.append(np.repeat(np.arange(base, base + len(unique)), size))
        pairs.append(unique[:, :size].reshape(-1))
        base += len(unique)
    if not weights:
        empty = np.zeros(0, dtype=np.intp)
        return item_pattern, np.zeros(0), empty, empty, empty
    return (item_pattern, np.concatenate(weights), np.concatenate(knowns).astype(np.intp),
            np.concatenate(ats).astype(np.intp), np.concatenate(pairs).astype(np.intp))


def dawid_skene(items: ArrayLike, annotators: ArrayLike, labels: ArrayLike, *, n_items: int | None = None,
                n_annotators: int | None = None, n_labels: int | None = None, known: ArrayLike | None = None,
                start: Consensus | None = None, prior: tuple[float, float] = (0.0, 0.0), n_iter: int = 100,
                tol: float = 1e-5) -> Consensus:
    """Dawid-Skene consensus: each item's posterior, each annotator's confusion, and the label priors.

    Parameters
    ----------
    items, annotators, labels : array of int
        One entry per annotation: the item's, the annotator's and the label's codes.
    n_items, n_annotators, n_labels : int, optional
        How many there are (by default, one more than the largest code).
    known : array of int, shape (items,), optional
        Each item's known label (ground truth), -1 where it is not known: the item keeps it (semi-supervised). An
        item nobody annotated has no label whatever is known of it: it informs no annotator's confusion.
    start : Consensus, optional
        A previous fit of the same items, annotators and labels to start from (a few steps refit it after a
        change); by default, and when an answer given now was impossible in it, the EM starts from majority vote.
    prior : (float, float)
        Pseudo-counts ``(a, b)`` added at every M-step to each annotator's expected counts: ``a`` where the label
        said is the true one, ``b`` shared evenly among the other labels anybody said (a Dirichlet prior on each
        confusion row, over the labels the annotator used; a label code nobody said takes no share, so that the
        fit does not depend on ``n_labels``). ``(0, 0)``: maximum likelihood.
    n_iter : int
        At most this many EM steps.
    tol : float
        Stop once the evidence lower bound per annotation gains less than this.

    Examples
    --------
    Two reliable annotators and one who always says 0 (item labels 1, 1, 0, 1):

    >>> fit = dawid_skene([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3], [0, 1, 2] * 4, [1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0])
    >>> fit.labels.tolist(), annotator_accuracy(fit).round(2).tolist()
    ([1, 1, 0, 1], [1.0, 1.0, 0.25])

    With a prior of two pseudo-counts on the diagonal and one shared off it, four items make nobody certain:

    >>> fit = dawid_skene([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3], [0, 1, 2] * 4, [1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0],
    ...                   prior=(2, 1))
    >>> fit.labels.tolist(), annotator_accuracy(fit).round(2).tolist()
    ([1, 1, 0, 1], [0.78, 0.78, 0.23])
    """
    i, w, l_, n_i, n_w, n_l = _codes(items, annotators, labels, n_items, n_annotators, n_labels)
    if not (n_iter >= 0 and tol >= 0):
        raise ValueError("n_iter and tol must not be negative.")
    known_codes = np.full(n_i, -1, dtype=np.intp) if known is None else np.asarray(known, dtype=np.intp)
    if known_codes.shape != (n_i,) or (known_codes >= n_l).any() or (known_codes < -1).any():
        raise ValueError(f"known must hold one label code (or -1) for each of the {n_i} items.")
    said = np.bincount(l_, minlength=n_l) > 0
    pseudo = _prior_matrix(prior, n_l, n_said=np.count_nonzero(said))
    used = np.bincount(w * n_l + l_, minlength=n_w * n_l) > 0
    item_pattern, weight, known_p, at, pairs = _patterns(i, w * n_l + l_, known_codes, n_i)
    said_w, said_l, n_p = pairs // max(n_l, 1), pairs % max(n_l, 1), len(weight)
    in_play = said.copy()  # a label somebody said, or that an annotated item is known to have
    in_play[known_p[known_p >= 0]] = True
    if (start is not None and start.confusion.shape == (n_w, n_l, n_l) and start.priors.shape == (n_l,)
            and (start.confusion[said_w, :, said_l] > 0).any(axis=1).all()):  # every answer now possible then
        posterior = _e_step(start.priors, _log_terms(start.confusion, said_w, said_l), at, n_p, known_p,
                            in_play=in_play)
    else:
        posterior = _with_known(majority_vote(at, said_l, n_items=n_p, n_labels=n_l).posterior, known_p)
    priors = _priors(posterior, weight) if n_p else np.zeros(n_l)
    confusion = _m_step(posterior, at, weight, pairs, used, n_w, n_l, pseudo)
    loss, steps, converged = -np.inf, 0, False
    while steps < n_iter and n_p:
        posterior = _e_step(priors, _log_terms(confusion, said_w, said_l), at, n_p, known_p, in_play=in_play)
        priors = _priors(posterior, weight)
        confusion = _m_step(posterior, at, weight, pairs, used, n_w, n_l, pseudo)
        steps += 1
        new_loss = _evidence(posterior, priors, _log_terms(confusion, said_w, said_l), at, weight,
                             _log_prior(confusion, pseudo) if pseudo.any() else None)
        if new_loss - loss < tol:
            converged = True
            break
        loss = new_loss
    annotated = item_pattern >= 0
    by_item = np.zeros((n_i, n_l))
    by_item[annotated] = posterior[item_pattern[annotated]]
    labels_out = np.where(annotated, by_item.argmax(axis=1) if n_l else -1, -1).astype(np.intp)
    answers = _expected_counts(posterior, at, weight, pairs, n_w, n_l).sum(axis=1)
    return Consensus(labels=labels_out, posterior=by_item, priors=priors, confusion=confusion, answers=answers,
                     iterations=steps, converged=converged)


def annotator_accuracy(consensus: Consensus) -> NDArray[np.float64]:
    """Each annotator's estimated accuracy on the items they answered, shape (annotators,).

    :math:`\\sum_k n^w_k \\pi^w_{kk} / \\sum_k n^w_k`, with ``consensus.answers`` as :math:`n^w_k`: the share of
    their answers that are the true label, in expectation under the fit. NaN for an annotator with no answer.

    Examples
    --------
    Three annotators who agree on items of label 0, 1 and 0, and a fourth, right on the two items of label 0 (by
    the label priors, :math:`\\sum_k p_k \\pi^w_{kk}`, she would read 0.67):

    >>> fit = dawid_skene([0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 2], [0, 1, 2] * 3 + [3, 3], [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0])
    >>> annotator_accuracy(fit).round(2).tolist()
    [1.0, 1.0, 1.0, 1.0]
    >>> round(float(fit.priors @ fit.confusion[3].diagonal()), 2)
    0.67
    """
    answered = consensus.answers.sum(axis=1)
    right = np.einsum("wk,wkk->w", consensus.answers, consensus.confusion)
    return np.divide(right, answered, out=np.full(len(answered), np.nan), where=answered > 0)


def held_posterior(fit: Consensus, items: ArrayLike, annotators: ArrayLike, labels: ArrayLike, *,
                   n_items: int | None = None, known: ArrayLike | None = None) -> NDArray[np.float64]:
    """Each item's posterior under a fit held from before: one E-step, O(the items' annotations x labels).

    This is what a live change costs: the items of one task are scored with the annotators' confusion and the
    priors of the last fit (:func:`dawid_skene`), without fitting again,
    :math:`T_{ik} \\propto p_k \\prod_{(w, l) \\in i} \\pi^w_{kl}`.
    An annotation the fit cannot weigh (an annotator or a label it did not see, or an answer it held impossible)
    is left out; an item left with none gets its labels' shares (majority vote), and an annotated item of known
    label (``known >= 0``) that label.

    Examples
    --------
    >>> fit = dawid_skene([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3], [0, 1, 2] * 4, [1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0])
    >>> held_posterior(fit, [0, 0, 0], [0, 1, 2], [1, 1, 0]).round(3).tolist()
    [[0.0, 1.0]]
    """
    n_w, n_l = fit.confusion.shape[0], len(fit.priors)
    i, w, l_, n_i, _, _ = _codes(items, annotators, labels, n_items, None, None)
    known_codes = np.full(n_i, -1, dtype=np.intp) if known is None else np.asarray(known, dtype=np.intp)
    if known_codes.shape != (n_i,) or (known_codes >= n_l).any() or (known_codes < -1).any():
        raise ValueError(f"known must hold one label code (or -1) for each of the {n_i} items.")
    weighed = (w < n_w) & (l_ < n_l)
    weighed[weighed] = (fit.confusion[w[weighed], :, l_[weighed]] > 0).any(axis=1)
    posterior = _e_step(fit.priors, _log_terms(fit.confusion, w[weighed], l_[weighed]), i[weighed], n_i,
                        np.full(n_i, -1, dtype=np.intp))
    unweighed = np.bincount(i[weighed], minlength=n_i) == 0
    if unweighed.any():
        seen = l_ < n_l
        votes = majority_vote(i[seen], l_[seen], n_items=n_i, n_labels=n_l).posterior
        posterior[unweighed] = votes[unweighed]
    said = np.bincount(i, minlength=n_i) > 0  # an item nobody annotated has no label, as in the fit
    return _with_known(posterior, np.where(said, known_codes, -1))
