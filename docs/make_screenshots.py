"""Draw the README's pictures: the admin report, and the "Low agreement" tab in Label Studio's own UI.

    .venv/bin/python docs/make_screenshots.py        (needs .venv-ls and Chromium, as `make test` installs them)

A local Label Studio gets the demo's project with 60 simulated tasks, annotated by five annotators who signed up;
`ls-agreement sync --mirror-to-data` scores it and `ls-agreement report` draws it.
"""

import sys
import tempfile
from pathlib import Path

from label_studio_sdk import LabelStudio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plugin.cli import main
from plugin.demo import CONFIG, simulated_export
from plugin.labelstudio import localserver
from tests.browser import browser_page

HERE = Path(__file__).resolve().parent
LABEL_STUDIO = str(Path(__file__).resolve().parents[1] / ".venv-ls" / "bin" / "label-studio")


def main_() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        server = localserver.start(Path(scratch) / "ls", command=LABEL_STUDIO)
        try:
            admin = LabelStudio(base_url=server.url, api_key=server.token)
            project = admin.projects.create(title="Product reviews", label_config=CONFIG, maximum_annotations=3)
            export = simulated_export(60, seed=4)
            admin.projects.import_tasks(id=project.id, request=[{"data": t["data"]} for t in export])
            tasks = sorted(t.id for t in admin.tasks.list(project=project.id, page_size=100))
            users = [localserver.sign_up(server.url, f"{name}@example.com")[0]
                     for name in ("alice", "bruno", "chen", "dana", "emeka")]
            for task, exported in zip(tasks, export, strict=True):
                for annotation in exported["annotations"]:
                    admin.annotations.create(id=task, result=annotation["result"],
                                             completed_by=users[annotation["completed_by"] - 1])
            common = ["--project", str(project.id), "--url", server.url, "--api-key", server.token, "--quiet"]
            main(["sync", *common, "--mirror-to-data"])
            report = Path(scratch) / "report.html"
            main(["report", *common, "--out", str(report)])
            tab = next(v for v in admin.views.list(project=project.id) if (v.data or {}).get("title") == "Low agreement")
            with browser_page(width=1300, height=620) as page:
                page.goto(f"{server.url}/user/login/")
                page.fill("input[name=email]", localserver.ADMIN_EMAIL)
                page.fill("input[name=password]", localserver.ADMIN_PASSWORD)
                page.click("button[type=submit]")
                page.wait_for_load_state("networkidle")
                page.goto(f"{server.url}/projects/{project.id}/data?tab={tab.id}")
                page.locator(".lsf-table-row").first.wait_for(timeout=60_000)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(HERE / "tab.png"))
            with browser_page(width=1300, height=1500) as page:
                page.goto(report.as_uri())
                page.screenshot(path=str(HERE / "report.png"))
        finally:
            server.stop()


if __name__ == "__main__":
    main_()
