"""Record tests/data/bratiaa_reference.json: bratiaa's instance-level pairwise F1 on its example project.

bratiaa (https://github.com/kldtz/bratiaa, MIT) is installed in a venv of its own from a clone of its repository
(commit b1e81832cbaea9cb4e8bf708fd9eabd71cd9b082), and run on the example project that
bratiaa_to_label_studio.py converts:

    python3 -m venv .venv-peers/bratiaa && .venv-peers/bratiaa/bin/pip install /tmp/bratiaa_src
    .venv-peers/bratiaa/bin/python tests/data/bratiaa_reference.py /tmp/bratiaa_src/example-files/example-project \
        > tests/data/bratiaa_reference.json

bratiaa's regression tests (tests/bratiaa/test_agree_regression.py) hold the same values to 7 decimals; its report
prints 3.
"""

import json
import sys

import bratiaa


def main(project: str) -> dict:
    f1 = bratiaa.compute_f1_agreement(project)
    label_mean, label_sd = f1.mean_sd_per_label()
    doc_mean, doc_sd = f1.mean_sd_per_document()
    total_mean, total_sd = f1.mean_sd_total()
    return {
        "bratiaa": "0.1.4 (b1e81832)",
        "annotators": f1.annotators,
        "per_label": {label: {"mean": float(m), "sd": float(s)}
                      for label, m, s in zip(f1.labels, label_mean, label_sd, strict=True)},
        "per_document": {doc: {"mean": float(m), "sd": float(s)}
                         for doc, m, s in zip(f1.documents, doc_mean, doc_sd, strict=True)},
        "total": {"mean": float(total_mean), "sd": float(total_sd)},
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1]), indent=1))
