"""The agreement block is merged into meta; unchanged blocks are not written."""

from plugin.settings import ReviewOptions
from plugin.state.blocks import TaskAsRead, agreement_block, escalated_overlap, merged_meta, needed_write
from plugin.state.scoring import TaskScore

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


def test_alpha_drift_is_not_a_change_but_what_a_reviewer_acts_on_is():
    old = agreement_block(SCORE, version="1", updated_at="t")
    drift = TaskScore(task=1, n_annotations=2, spa=0.5, alpha=0.205, flagged=False, reasons=(),
                      controls={"sentiment": {"spa": 0.5, "alpha": 0.195, "n_items": 1}})
    assert merged_meta({"agreement": old}, agreement_block(drift, version="1", updated_at="u")) is None
    moved = TaskScore(task=1, n_annotations=2, spa=0.5, alpha=0.6, flagged=False, reasons=(),
                      controls={"sentiment": {"spa": 0.5, "alpha": 0.6, "n_items": 1}})  # the project moved
    assert merged_meta({"agreement": old}, agreement_block(moved, version="1", updated_at="u")) is None
    undefined = TaskScore(task=1, n_annotations=2, spa=0.5, alpha=None, flagged=False, reasons=(),
                          controls={"sentiment": {"spa": 0.5, "alpha": None, "n_items": 1}})
    assert merged_meta({"agreement": old}, agreement_block(undefined, version="1", updated_at="u")) is not None
    flagged = TaskScore(task=1, n_annotations=2, spa=0.5, alpha=0.6, flagged=True, reasons=("sentiment: ...",),
                        controls={"sentiment": {"spa": 0.5, "alpha": 0.6, "n_items": 1}})
    written = merged_meta({"agreement": old}, agreement_block(flagged, version="1", updated_at="u"))
    assert written["agreement"]["alpha"] == 0.6  # written for the flag: its drifted values come along
    spa_moved = TaskScore(task=1, n_annotations=2, spa=0.5001, alpha=0.2, flagged=False, reasons=(),
                          controls={"sentiment": {"spa": 0.5, "alpha": 0.2, "n_items": 1}})
    assert merged_meta({"agreement": old}, agreement_block(spa_moved, version="1", updated_at="u")) is not None



def test_a_span_controls_gamma_drifts_and_its_f1_is_exact():
    def block(gamma, f1):
        score = TaskScore(task=1, n_annotations=2, spa=0.5, alpha=None, flagged=False, reasons=(),
                          controls={"ner": {"spa": 0.5, "alpha": None, "n_items": 2, "f1": f1, "f1_overlap": 1.0,
                                            "gamma": gamma, "flag_on": "f1_overlap"}})
        return agreement_block(score, version="1", updated_at="t")
    old = block(0.8, 0.5)
    assert merged_meta({"agreement": old}, block(0.805, 0.5)) is None  # the expected disorder was sampled again
    assert merged_meta({"agreement": old}, block(0.6, 0.5)) is None  # drift alone: what a reviewer sees is the same
    assert merged_meta({"agreement": old}, block(0.8, 0.5001)) is not None
    assert merged_meta({"agreement": old}, block(None, 0.5)) is not None


# --- the one diff: what a task needs written ---

FLAGGED = {"n_annotations": 2, "flagged": True, "alpha": 0.1,
           "controls": {"sentiment": {"spa": 0.25}, "quality": {"spa": 0.5, "agreement": 0.75}}}
EVERYTHING = ReviewOptions(mirror_to_data=True, escalate=True, max_overlap=4)


def test_a_task_without_its_block_needs_its_meta_merged():
    write = needed_write(TaskAsRead(meta={"source": "crm"}), FLAGGED, review=ReviewOptions())
    assert write is not None
    assert write.meta == {"source": "crm", "agreement": FLAGGED}
    assert (write.mirror, write.overlap, write.data({"text": "x"})) == (False, None, None)


def test_a_task_carrying_its_block_needs_nothing():
    assert needed_write(TaskAsRead(meta={"agreement": FLAGGED}, overlap=2), FLAGGED, review=ReviewOptions()) is None


def test_an_alpha_that_drifted_needs_nothing_and_one_that_became_undefined_a_write():
    far = dict(FLAGGED, alpha=0.6)
    assert needed_write(TaskAsRead(meta={"agreement": FLAGGED}), far, review=ReviewOptions()) is None
    gone = dict(FLAGGED, alpha=None)
    assert needed_write(TaskAsRead(meta={"agreement": FLAGGED}), gone, review=ReviewOptions()).meta["agreement"] == gone


def test_the_mirrored_score_is_the_lowest_control_agreement_merged_into_the_data_as_read():
    # 0.25, then no consensus (counted certain: 100 hundredths, times 1e-6) and 2 annotations (times 1e-8)
    read = TaskAsRead(meta={"agreement": FLAGGED}, data_score=0.5, overlap=5)
    write = needed_write(read, FLAGGED, review=EVERYTHING)
    assert (write.meta, write.mirror, write.score, write.overlap) == (None, True, 0.25010002, None)
    assert write.data({"text": "x", "agreement_score": 0.5}) == {"text": "x", "agreement_score": 0.25010002}
    assert needed_write(TaskAsRead(meta={"agreement": FLAGGED}, data_score=0.25010002, overlap=5), FLAGGED,
                        review=EVERYTHING) is None


def test_a_mirrored_score_apart_by_a_posterior_s_drift_alone_needs_no_write():
    def block(posterior, n_annotations=2, spa=0.25):
        return {**FLAGGED, "n_annotations": n_annotations,
                "controls": {"sentiment": {"spa": spa, "consensus": {"label": "a", "posterior": posterior}}}}

    held = TaskAsRead(meta={"agreement": block(0.62)}, data_score=0.25006202, overlap=5)
    mirror = ReviewOptions(mirror_to_data=True)
    assert needed_write(held, block(0.62), review=mirror) is None
    for posterior in (0.63, 0.68, 0.99, 0.0):  # a refit's drift: the data stays as written
        assert needed_write(held, block(posterior), review=mirror) is None
    assert needed_write(held, block(0.62, 3), review=mirror).score == 0.25006203  # one more annotation
    assert needed_write(held, block(0.62, spa=0.5), review=mirror).score == 0.50006202  # another score
    # once written for another reason, the data carries the posterior as of that write
    assert needed_write(held, block(0.9, 3), review=mirror).score == 0.25009003


def test_a_score_that_became_undefined_is_removed_from_the_data():
    block = dict(FLAGGED, controls={})
    write = needed_write(TaskAsRead(meta={"agreement": block}, data_score=0.5), block,
                         review=ReviewOptions(mirror_to_data=True))
    assert (write.score, write.data({"text": "x", "agreement_score": 0.5})) == (None, {"text": "x"})


def test_a_flagged_task_with_all_its_annotations_asks_for_one_more_up_to_the_cap():
    write = needed_write(TaskAsRead(meta={"agreement": FLAGGED}, overlap=2), FLAGGED, 
                         review=ReviewOptions(escalate=True, max_overlap=4))
    assert (write.meta, write.mirror, write.overlap) == (None, False, 3)
    assert escalated_overlap(4, dict(FLAGGED, n_annotations=4), cap=4) is None
    assert escalated_overlap(2, dict(FLAGGED, flagged=False), cap=4) is None
    assert escalated_overlap(None, FLAGGED, cap=4) is None


def test_the_task_as_read_takes_meta_score_and_overlap_from_a_task():
    read = TaskAsRead.of({"id": 3, "meta": {"k": 1}, "data": {"agreement_score": 0.4}, "overlap": 3})
    assert read == TaskAsRead(meta={"k": 1}, data_score=0.4, overlap=3)
    assert TaskAsRead.of({"id": 3, "data": "not a dict"}) == TaskAsRead()


def test_a_mirrored_gamma_drifting_within_the_tolerance_needs_no_write():
    def block(gamma):
        return {"n_annotations": 2, "flagged": False, "alpha": None,
                "controls": {"ner": {"spa": 1.0, "f1_overlap": 1.0, "gamma": gamma, "flag_on": "gamma"}}}

    mirror = ReviewOptions(mirror_to_data=True)
    held = TaskAsRead(meta={"agreement": block(0.9946)}, data_score=0.995)
    assert needed_write(held, block(0.9944), review=mirror) is None  # a new sample of the expected disorder
    assert needed_write(held, block(0.96), review=mirror) is None  # within ALPHA_TOLERANCE (0.05)
    write = needed_write(held, block(0.9), review=mirror)  # a real change
    assert write is not None and write.mirror and write.score == 0.90010002
    # a score that is not a gamma is mirrored exactly, as before
    f1 = {"n_annotations": 2, "flagged": False, "controls": {"ner": {"spa": 1.0, "f1_overlap": 0.9944,
                                                                     "flag_on": "f1_overlap"}}}
    assert needed_write(TaskAsRead(meta={"agreement": f1}, data_score=0.995), f1, review=mirror).score == 0.99410002


def test_a_refit_that_moves_a_near_tie_s_consensus_label_writes_nothing_until_the_task_changes():
    def block(label, posterior, n_annotations=2, spa=0.0):
        return {**FLAGGED, "n_annotations": n_annotations, "controls": {"sentiment": {
            "spa": spa, "consensus": {"label": label, "posterior": posterior, "method": "dawid-skene"}}}}

    held = TaskAsRead(meta={"agreement": block("pos", 0.55)})
    review = ReviewOptions()
    assert needed_write(held, block("neg", 0.6), review=review) is None  # the refit is unsure of "neg" too
    sure = needed_write(held, block("neg", 0.8), review=review)  # the refit is sure: written
    assert sure.meta["agreement"]["controls"]["sentiment"]["consensus"]["label"] == "neg"
    # a new annotation writes the task, and its label as the refit has it, sure or not
    again = needed_write(held, block("neg", 0.6, n_annotations=3, spa=1 / 3), review=review)
    assert again.meta["agreement"]["controls"]["sentiment"]["consensus"] == {
        "label": "neg", "posterior": 0.6, "method": "dawid-skene"}
    # a consensus that was undefined, or becomes so, is always written
    assert needed_write(TaskAsRead(meta={"agreement": block(None, None)}), block("neg", 0.6), review=review)
    assert needed_write(held, block(None, None), review=review)


def test_the_consensus_label_of_a_task_with_one_annotation_is_written_when_it_moves_surely():
    # The block does not say which answer it was computed from: with one annotation, an edit of that answer changes
    # nothing in it but the consensus label, so a label moved surely is written, whether a refit or an edit moved it
    def block(label, posterior):
        return {"n_annotations": 1, "flagged": False, "spa": None, "alpha": None, "controls": {
            "sentiment": {"spa": None, "consensus": {"label": label, "posterior": posterior, "method": "dawid-skene"}}}}

    held = TaskAsRead(meta={"agreement": block("pos", 0.86)})
    edited = needed_write(held, block("neg", 0.74), review=ReviewOptions())  # the annotator changed their answer
    assert edited.meta["agreement"]["controls"]["sentiment"]["consensus"]["label"] == "neg"
