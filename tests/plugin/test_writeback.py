"""The agreement block is merged into meta; unchanged blocks are not written."""

from plugin.scoring import TaskScore
from plugin.writeback import agreement_block, merged_meta

SCORE = TaskScore(task=1, n_annotations=2, spa=0.5, alpha=0.2, flagged=False, reasons=(),
                  controls={"sentiment": {"spa": 0.5, "alpha": 0.2, "n_items": 1}})


def test_block_fields():
    block = agreement_block(SCORE, version="1.0", updated_at="t")
    assert block == {"spa": 0.5, "alpha": 0.2, "n_annotations": 2, "flagged": False, "reasons": [],
                     "controls": {"sentiment": {"spa": 0.5, "alpha": 0.2, "n_items": 1}}, "updated_at": "t",
                     "version": "1.0"}


def test_other_keys_are_kept():
    meta = merged_meta({"source": "crm", "agreement": {"old": True}}, agreement_block(SCORE, version="1", updated_at="t"))
    assert meta["source"] == "crm" and meta["agreement"]["spa"] == 0.5


def test_unchanged_scores_are_not_written_whatever_the_time():
    first = agreement_block(SCORE, version="1", updated_at="2026-01-01")
    later = agreement_block(SCORE, version="1", updated_at="2026-02-01")
    assert merged_meta({"agreement": first, "x": 1}, later) is None


def test_tasks_without_annotations_or_scores_are_left_alone():
    empty = TaskScore(task=2, n_annotations=0, spa=None, alpha=None, flagged=False, reasons=(), controls={})
    assert merged_meta({"x": 1}, agreement_block(empty, version="1", updated_at="t")) is None
    cleared = merged_meta({"agreement": agreement_block(SCORE, version="1", updated_at="t")},
                          agreement_block(empty, version="1", updated_at="t"))
    assert cleared["agreement"]["n_annotations"] == 0 and cleared["agreement"]["spa"] is None


def test_meta_that_is_not_an_object_is_replaced():
    assert merged_meta("garbage", agreement_block(SCORE, version="1", updated_at="t"))["agreement"]["spa"] == 0.5


def test_alpha_drift_within_the_tolerance_is_not_a_change():
    old = agreement_block(SCORE, version="1", updated_at="t")
    drift = TaskScore(task=1, n_annotations=2, spa=0.5, alpha=0.205, flagged=False, reasons=(),
                      controls={"sentiment": {"spa": 0.5, "alpha": 0.195, "n_items": 1}})
    assert merged_meta({"agreement": old}, agreement_block(drift, version="1", updated_at="u")) is None
    moved = TaskScore(task=1, n_annotations=2, spa=0.5, alpha=0.25, flagged=False, reasons=(),
                      controls={"sentiment": {"spa": 0.5, "alpha": 0.25, "n_items": 1}})
    assert merged_meta({"agreement": old}, agreement_block(moved, version="1", updated_at="u")) is not None
    spa_moved = TaskScore(task=1, n_annotations=2, spa=0.5001, alpha=0.2, flagged=False, reasons=(),
                          controls={"sentiment": {"spa": 0.5, "alpha": 0.2, "n_items": 1}})
    assert merged_meta({"agreement": old}, agreement_block(spa_moved, version="1", updated_at="u")) is not None
