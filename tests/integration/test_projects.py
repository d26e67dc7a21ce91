"""``serve --project all`` against a real Label Studio: a project created later is monitored within the discovery
interval, a changed label config is re-mapped before the next annotation is scored, and a deleted project is dropped
in one line of ``/status`` with ``/health`` unaffected."""

import requests
from label_studio_sdk import LabelStudio

from plugin.labelstudio.localserver import free_port, sign_up

from .test_serve import HEADERS, start_service, stop, wait_for

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices></View>"""
CHANGED = CONFIG.replace('<Choice value="neg"/>', '<Choice value="neg"/><Choice value="mixed"/>')


def choice(value):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [value]}}]


def test_every_project_new_changed_and_deleted(label_studio, tmp_path):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    users = [LabelStudio(base_url=label_studio.url, api_key=sign_up(label_studio.url, f"all{i}@example.com")[1])
             for i in range(2)]

    def project_with_tasks(title, n):
        project = admin.projects.create(title=title, label_config=CONFIG).id
        admin.projects.import_tasks(id=project, request=[{"data": {"text": f"t{i}"}} for i in range(n)])
        return project, sorted(t.id for t in admin.tasks.list(project=project, page_size=10))

    def meta(task):
        return admin.tasks.get(id=str(task)).meta or {}

    first, first_tasks = project_with_tasks("before the service", 1)
    for user, value in zip(users, ("pos", "neg"), strict=True):
        user.annotations.create(id=first_tasks[0], result=choice(value))
    port = free_port()
    with open(tmp_path / "service.log", "wb") as log:
        process, url = start_service(label_studio.url, label_studio.token, "all", port, log, "--discover-interval",
                                     "1", "--reconcile-interval", "3600", wait=False)
        try:
            def status():
                try:
                    return requests.get(f"{url}/status", headers=HEADERS, timeout=5).json()
                except (requests.RequestException, ValueError):
                    return None

            wait_for(lambda: (s := status()) and s["projects"].get(str(first), {}).get("passes", 0) >= 1, 60)
            # a pass counts once its writes are requested: wait for the write itself
            block = wait_for(lambda: meta(first_tasks[0]).get("agreement"))
            assert block["controls"]["sentiment"]["spa"] == 0.0

            # created while the service runs: monitored within the discovery interval, its webhook registered
            second, second_tasks = project_with_tasks("after the service", 2)
            wait_for(lambda: status()["projects"].get(str(second), {}).get("passes", 0) >= 1, 30)
            hooks = [h.url for h in admin.webhooks.list(project=str(second))]
            assert hooks == [f"{url}/webhook"]
            users[0].annotations.create(id=second_tasks[0], result=choice("pos"))
            wait_for(lambda: meta(second_tasks[0]).get("agreement", {}).get("n_annotations") == 1)

            # a choice added, and used at once: scored with the new config, not dropped as outside the old one
            admin.projects.update(id=second, label_config=CHANGED)
            users[0].annotations.create(id=second_tasks[1], result=choice("pos"))
            users[1].annotations.create(id=second_tasks[1], result=choice("mixed"))
            block = wait_for(lambda: (m := meta(second_tasks[1]).get("agreement")) and m["n_annotations"] == 2 and m)
            assert block["controls"]["sentiment"]["spa"] == 0.0
            assert status()["projects"][str(second)]["skipped"] == {}

            # deleted: dropped once, listed, health unaffected, no growing error
            admin.projects.delete(id=first)
            wait_for(lambda: str(first) not in status()["projects"], 30)
            seen = status()
            assert [(r["project"], r["reason"]) for r in seen["projects_removed"]] == [
                (first, "deleted in Label Studio")]
            assert not [kind for kind in seen["errors"] if f"project {first}" in kind]
            assert requests.get(f"{url}/health", timeout=5).status_code == 200
        finally:
            stop(process)
    assert [h.url for h in admin.webhooks.list(project=str(second))] == []  # a clean stop removes its webhooks
    text = (tmp_path / "service.log").read_text()
    assert f"Project {second}: monitored from now on" in text
    assert f"Project {first}: no longer monitored (deleted in Label Studio)" in text
    assert f"Project {second}: its label config changed" in text


def test_a_settings_file_changed_while_serving_re_scores_the_project(label_studio, tmp_path):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    users = [LabelStudio(base_url=label_studio.url, api_key=sign_up(label_studio.url, f"set{i}@example.com")[1])
             for i in range(3)]
    project = admin.projects.create(title="settings file", label_config=CONFIG).id
    admin.projects.import_tasks(id=project, request=[{"data": {"text": "t"}}])
    task = next(iter(admin.tasks.list(project=project))).id
    for user, value in zip(users, ("pos", "pos", "neg"), strict=True):  # SPA 1/3
        user.annotations.create(id=task, result=choice(value))
    settings = tmp_path / "settings.toml"
    settings.write_text("threshold = 0.5\n")

    def flagged():
        return (admin.tasks.get(id=str(task)).meta or {}).get("agreement", {}).get("flagged")

    with open(tmp_path / "service.log", "wb") as log:
        process, _ = start_service(label_studio.url, label_studio.token, project, free_port(), log,
                                   "--settings", str(settings))
        try:
            wait_for(lambda: flagged() is True)
            settings.write_text(f"threshold = 0.5\n\n[projects.{project}]\nthreshold = 0.25\n")
            wait_for(lambda: flagged() is False, 20)
        finally:
            stop(process)
    assert f"Project {project}: its settings changed; re-scoring it." in (tmp_path / "service.log").read_text()


def test_two_shards_on_one_label_studio_never_touch_each_others_projects(label_studio, tmp_path):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    users = [LabelStudio(base_url=label_studio.url, api_key=sign_up(label_studio.url, f"shard{i}@example.com")[1])
             for i in range(2)]
    projects = {}
    for title in ("shard a", "shard b", "shard c"):
        project = admin.projects.create(title=title, label_config=CONFIG).id
        admin.projects.import_tasks(id=project, request=[{"data": {"text": title}}])
        projects[project] = next(iter(admin.tasks.list(project=project))).id
    mine = {index: sorted(p for p in projects if (p - 1) % 2 == index - 1) for index in (1, 2)}
    services = []
    try:
        for index in (1, 2):
            log = open(tmp_path / f"shard{index}.log", "wb")  # noqa: SIM115 (closed below, after the process)
            process, url = start_service(label_studio.url, label_studio.token, "all", free_port(), log,
                                         "--shard", f"{index}/2", "--discover-interval", "1", wait=False)
            services.append((process, url, log))

        def monitored(url):
            try:
                return requests.get(f"{url}/status", headers=HEADERS, timeout=5).json()["projects"]
            except (requests.RequestException, ValueError, KeyError):
                return None

        for index, (_, url, _) in zip((1, 2), services, strict=True):
            wait_for(lambda url=url, index=index: (seen := monitored(url)) is not None
                     and set(map(int, seen)) >= set(mine[index]) and all(seen[str(p)]["passes"] >= 1
                                                                          for p in mine[index]), 60)
            assert not set(map(int, monitored(url))) & set(mine[3 - index])  # none of the other shard's
        for project, task in projects.items():  # one webhook per project, the owner's
            owner = 1 if project in mine[1] else 2
            assert [h.url for h in admin.webhooks.list(project=str(project))] == [f"{services[owner - 1][1]}/webhook"]
            for user, value in zip(users, ("pos", "neg"), strict=True):
                user.annotations.create(id=task, result=choice(value))
        for task in projects.values():  # each scored by its owner, live
            block = wait_for(lambda task=task: (m := (admin.tasks.get(id=str(task)).meta or {}).get("agreement"))
                             and m["n_annotations"] == 2 and m)
            assert block["controls"]["sentiment"]["spa"] == 0.0
    finally:
        for process, _, log in services:
            stop(process)
            log.close()
    for project in projects:
        assert [h.url for h in admin.webhooks.list(project=str(project))] == []
    for index in (1, 2):
        text = (tmp_path / f"shard{index}.log").read_text()
        for project in mine[3 - index]:
            assert f"Project {project}:" not in text  # the other shard's projects never appear in its log
