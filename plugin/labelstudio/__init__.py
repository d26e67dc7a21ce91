"""Label Studio's side: the client, exports read offline, webhook payloads, and a local server.

:mod:`.client` is the one module that calls Label Studio (through label-studio-sdk and its HTTP session);
:mod:`.export` reads a JSON export without a server or the SDK; :mod:`.events` parses webhook payloads into
events that carry ids only; :mod:`.localserver` starts a Label Studio on loopback for the demo, the tests and the
benchmarks. It may import :mod:`plugin.settings`, :mod:`plugin.clock` and :mod:`plugin.mapping` (the config and
annotation records), never the state, the keeper or the service. Nothing is imported here, so that a module
that needs an export's reader does not load the SDK.
"""
