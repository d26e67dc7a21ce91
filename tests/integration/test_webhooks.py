"""Webhook hygiene against a real Label Studio: one webhook per project whatever the URL, none after a clean stop,
and nobody else's touched."""

from label_studio_sdk import LabelStudio

from plugin.labelstudio.localserver import free_port

from .test_serve import start_service, stop

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices></View>"""


def test_starts_at_two_urls_leave_one_webhook_and_a_clean_stop_leaves_none(label_studio, tmp_path):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="webhooks", label_config=CONFIG).id
    admin.projects.import_tasks(id=project, request=[{"data": {"text": "t"}}])
    foreign = admin.webhooks.create(url="http://127.0.0.1:9/someone-else", project=project, send_payload=True,
                                    send_for_all_actions=True, headers={"X-Theirs": "1"})

    def urls():
        return sorted(h.url for h in admin.webhooks.list(project=str(project)))

    first, second = free_port(), free_port()
    with open(tmp_path / "service.log", "wb") as log:
        process, _ = start_service(label_studio.url, label_studio.token, project, first, log, "--keep-webhooks")
        stop(process)
        assert urls() == sorted([foreign.url, f"http://127.0.0.1:{first}/webhook"])  # kept, as asked
        process, _ = start_service(label_studio.url, label_studio.token, project, second, log)
        try:
            assert urls() == sorted([foreign.url, f"http://127.0.0.1:{second}/webhook"])  # the old one removed
        finally:
            stop(process)
    assert urls() == [foreign.url]  # a clean stop removes its own webhook, never anyone else's
    assert "removed 1 webhook(s) of this service on stopping" in (tmp_path / "service.log").read_text()
