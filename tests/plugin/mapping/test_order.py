"""Order independence: the same annotations in any result order give the same rows (a property test)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.settings import MappingOptions
from tests.plugin.mapping.helpers import result, run, submissions_of
from tests.profiles import examples

CONFIG = """<View><Text name="t" value="$t"/><Image name="image" value="$image"/>
  <Labels name="ner" toName="t"><Label value="A"/><Label value="B"/></Labels>
  <RectangleLabels name="box" toName="image"><Label value="A"/><Label value="B"/></RectangleLabels>
  <PolygonLabels name="poly" toName="image"><Label value="A"/><Label value="B"/></PolygonLabels>
  <Choices name="kind" toName="image" perRegion="true"><Choice value="x"/><Choice value="y"/></Choices>
  <Relations><Relation value="r"/></Relations></View>"""

label = st.sampled_from(["A", "B"])
span = st.builds(lambda s, n, lab: ("ner", "labels", {"start": s, "end": s + n, "labels": [lab]}),
                 st.integers(0, 20), st.integers(1, 8), label)
box = st.builds(lambda x, y, w, lab: ("box", "rectanglelabels", {"x": x, "y": y, "width": w, "height": w,
                                                                 "rectanglelabels": [lab]}),
                st.integers(0, 30), st.integers(0, 30), st.integers(5, 20), label)
poly = st.builds(lambda x, w, lab: ("poly", "polygonlabels", {"points": [[x, 0], [x + w, 0], [x, w]],
                                                              "polygonlabels": [lab]}),
                 st.integers(0, 30), st.integers(5, 20), label)
region = st.one_of(span, box, poly)
annotator = st.lists(st.tuples(region, st.sampled_from(["x", "y", None])), max_size=6)


def results_of(regions, prefix):
    out = []
    for index, ((name, kind, value), choice) in enumerate(regions):
        rid = f"{prefix}{index}"
        out.append(result(name, kind, value, rid))
        if choice and name != "ner":
            out.append(result("kind", "choices", {"choices": [choice]}, rid))
    if len(regions) >= 2:
        out.append({"type": "relation", "from_id": f"{prefix}0", "to_id": f"{prefix}1", "labels": ["r"]})
    return out


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(annotator, min_size=2, max_size=3), st.randoms(use_true_random=False),
       st.sampled_from(["exact", "overlap"]))
def test_any_result_order_gives_the_same_rows(annotators, random, alignment):
    results = [results_of(regions, chr(ord("p") + i)) for i, regions in enumerate(annotators)]
    shuffled = [random.sample(r, len(r)) for r in results]
    options = MappingOptions(span_alignment=alignment)
    first, first_skips = run(CONFIG, submissions_of(*results), options)
    second, second_skips = run(CONFIG, submissions_of(*shuffled), options)
    for name in first:
        assert sorted(first[name].records, key=repr) == sorted(second[name].records, key=repr), name
    assert first_skips.as_dict() == second_skips.as_dict()
