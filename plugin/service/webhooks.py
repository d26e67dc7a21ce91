"""The service's webhooks in Label Studio: registered per project, removed on a clean stop."""

from __future__ import annotations

import logging

from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.errors import one_line
from plugin.labelstudio.events import EVENTS
from plugin.service.settings import MARKER_HEADER, SECRET_HEADER, ServiceSettings

__all__ = ["Webhooks"]

log = logging.getLogger("ls_agreement.service")


class Webhooks:
    """Which projects carry this service's webhook, registered once each (Label Studio keeps it)."""

    def __init__(self, client: LabelStudioClient, settings: ServiceSettings) -> None:
        self._client = client
        self._settings = settings
        self.url = f"{settings.public_url.rstrip('/')}/webhook"
        self.registered: set[int] = set()

    def ensure(self, project: int) -> None:
        """Register the webhook of ``project`` unless this service did already (the one it finds is reused)."""
        if project in self.registered:
            return
        self._client.ensure_webhook(project, url=self.url, actions=EVENTS, marker=MARKER_HEADER,
                                    headers={SECRET_HEADER: self._settings.secret, MARKER_HEADER: self.url})
        self.registered.add(project)

    def forget(self, project: int) -> None:
        """The project is gone (Label Studio deleted its webhooks with it)."""
        self.registered.discard(project)

    def remove_all(self) -> None:
        """Remove every webhook this service registered.

        Remove every webhook this service registered, so that Label Studio stops calling a dead address (each
        call waits inside an annotator's request); a failure is logged, never raised."""
        for project in sorted(self.registered):
            try:
                removed = self._client.remove_webhooks(project, url=self.url, marker=MARKER_HEADER)
                log.info("Project %s: removed %d webhook(s) of this service on stopping.", project, removed)
            except Exception as error:  # noqa: BLE001 (stopping anyway: the next start at any URL removes it)
                log.warning("Project %s: its webhook was left in place (%s).", project, one_line(error))
