"""docker/: what can be checked without a Docker engine."""

import configparser
import re
from pathlib import Path

import yaml

from plugin.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker" / "docker-compose.yml").read_text())
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
VARIABLE = re.compile(r"\$\{([A-Z_]+)(:-([^}]*)|:\?([^}]*))?\}")
SECRETS = {"POSTGRES_PASSWORD", "LABEL_STUDIO_PASSWORD", "LABEL_STUDIO_API_KEY", "AGREEMENT_WEBHOOK_SECRET"}
OPTIONAL = {"AGREEMENT_SETTINGS", "AGREEMENT_SHARD"}  # empty by default: no settings file, every project named
# Read only for `--shard auto`, in a Kubernetes StatefulSet's pods (deploy/kubernetes/statefulset.yaml sets them);
# HOSTNAME, the last resort, is read the same way but set by the container runtime.
POD_ONLY = {"AGREEMENT_SHARDS", "AGREEMENT_POD_INDEX", "POD_NAME"}


def substitute(text: str) -> str:
    """Compose's ${NAME:-default} with the defaults."""
    return VARIABLE.sub(lambda m: m.group(3) or "", text)


def test_label_studio_is_the_tested_version():
    tested = re.search(r"^LABEL_STUDIO_VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.MULTILINE).group(1)
    assert COMPOSE["services"]["label-studio"]["image"] == f"heartexlabs/label-studio:{tested}"


def test_every_variable_the_service_reads_is_set_with_a_default_but_the_secrets():
    agreement = COMPOSE["services"]["agreement"]["environment"]
    read = set()
    for path in (ROOT / "plugin" / "cli.py", ROOT / "plugin" / "settings.py"):  # where the service reads settings
        read |= set(re.findall(r'environ\.get\("([A-Z_]+)"', path.read_text()))
    read |= {"LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY"}  # read in plugin.settings.connection_from
    read.discard("LABEL_STUDIO_BIN")  # the demo's, not the service's
    statefulset = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "statefulset.yaml").read_text())
    pod_env = {variable["name"] for variable in statefulset["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert POD_ONLY <= read and POD_ONLY <= pod_env, (POD_ONLY - read, POD_ONLY - pod_env)
    read -= POD_ONLY
    assert read <= set(agreement), read - set(agreement)
    for value in [*agreement.values(), *COMPOSE["services"]["label-studio"]["environment"].values()]:
        for match in VARIABLE.finditer(str(value)):
            if match.group(1) in SECRETS:  # compose refuses to start until they are set: no working default ships
                assert match.group(4) and match.group(1) in match.group(4), match.group(0)
            else:
                assert match.group(3) or (match.group(1) in OPTIONAL and match.group(2) == ":-"), \
                    f"{match.group(1)} has no default"


def test_the_webhook_secret_and_token_are_shared():
    label_studio = COMPOSE["services"]["label-studio"]["environment"]
    agreement = COMPOSE["services"]["agreement"]["environment"]
    assert label_studio["LABEL_STUDIO_USER_TOKEN"].split(":?")[0] == agreement["LABEL_STUDIO_API_KEY"].split(":?")[0]
    assert label_studio["SSRF_PROTECTION_ENABLED"] == "false"
    example = (ROOT / "docker" / ".env.example").read_text()
    for name in SECRETS:  # the example ships no secret that would work
        assert re.search(rf"^{name}=$", example, re.MULTILINE), name
    for name in set(VARIABLE.findall((ROOT / "docker" / "docker-compose.yml").read_text())):
        assert f"{name[0]}=" in example or name[0] == "LABEL_STUDIO_URL"


def test_health_checks_ports_and_volume():
    agreement = COMPOSE["services"]["agreement"]
    assert "/health" in " ".join(agreement["healthcheck"]["test"]) and ":9090/" in substitute(" ".join(agreement["healthcheck"]["test"]))
    assert "/health" in " ".join(COMPOSE["services"]["label-studio"]["healthcheck"]["test"])
    assert substitute(agreement["ports"][0]).endswith(":9090")
    assert agreement["depends_on"]["label-studio"]["condition"] == "service_healthy"
    assert "label-studio-data:/label-studio/data" in COMPOSE["services"]["label-studio"]["volumes"]
    assert "label-studio-data" in COMPOSE["volumes"]
    # the saved states: a volume where the service saves them, a directory its user owns in the image
    state_dir = substitute(agreement["environment"]["AGREEMENT_STATE_DIR"])
    assert f"agreement-state:{state_dir}" in agreement["volumes"] and "agreement-state" in COMPOSE["volumes"]
    assert f"mkdir {state_dir} && chown agreement:agreement {state_dir}" in DOCKERFILE
    assert f"ENV AGREEMENT_STATE_DIR={state_dir}" in DOCKERFILE and f"VOLUME {state_dir}" in DOCKERFILE
    shards = yaml.safe_load((ROOT / "docker" / "docker-compose.shards.yml").read_text())
    assert shards["services"]["agreement-2"]["volumes"] == [f"agreement-state-2:{state_dir}"]


def test_the_commands_are_valid_invocations_of_the_installed_script():
    entry = re.search(r'^ENTRYPOINT \["([^"]+)"\]$', DOCKERFILE, re.MULTILINE).group(1)
    scripts = configparser.ConfigParser()
    scripts.read(ROOT / "setup.cfg")
    assert f"{entry} = plugin.cli:main" in scripts["options.entry_points"]["console_scripts"]
    cmd = re.search(r"^CMD (\[.*\])$", DOCKERFILE, re.MULTILINE).group(1)
    parsed = build_parser().parse_args(yaml.safe_load(cmd))
    assert (parsed.command, parsed.host, parsed.port) == ("serve", "0.0.0.0", 9090)
    compose_command = [substitute(part) for part in COMPOSE["services"]["agreement"]["command"]]
    parsed = build_parser().parse_args(compose_command)
    assert parsed.public_url == "http://agreement:9090" and parsed.port == 9090 and parsed.reconcile_interval == 300
    assert "EXPOSE 9090" in DOCKERFILE and "/health" in DOCKERFILE


def test_the_image_runs_as_a_non_root_user_on_python_slim():
    assert re.search(r"^FROM python:3\.11-slim$", DOCKERFILE, re.MULTILINE)
    user = re.search(r"^USER (\S+)$", DOCKERFILE, re.MULTILINE).group(1)
    assert user not in ("root", "0")
    # The image installs this package from the sources it copies, so the entry point is the installed script.
    assert re.search(r"^RUN pip install \. ", DOCKERFILE, re.MULTILINE)
    assert {"agreement", "plugin"} <= set(re.findall(r"^COPY (\w+) \./\1$", DOCKERFILE, re.MULTILINE))


def test_the_shards_override_runs_two_services_that_split_the_projects():
    from plugin.cli import _shard
    from plugin.service.app import ServiceSettings

    shards = yaml.safe_load((ROOT / "docker" / "docker-compose.shards.yml").read_text())["services"]
    first = {**COMPOSE["services"]["agreement"]["environment"], **shards["agreement"]["environment"]}
    second = shards["agreement-2"]["environment"]
    assert set(first) == set(second)  # the second shard reads every setting the first does
    urls, owners = set(), {}
    for command, env in ((COMPOSE["services"]["agreement"]["command"], first),
                         (shards["agreement-2"]["command"], second)):
        parsed = build_parser().parse_args([substitute(part) for part in command])
        urls.add(parsed.public_url)
        settings = ServiceSettings(projects=(), all_projects=True, public_url=parsed.public_url, secret="",
                                   connection=None, shard=_shard(env["AGREEMENT_SHARD"]))
        owners[env["AGREEMENT_SHARD"]] = [p for p in range(1, 9) if settings.owns(p)]
    assert urls == {"http://agreement:9090", "http://agreement-2:9090"}  # each called back at its own address
    assert owners == {"1/2": [1, 3, 5, 7], "2/2": [2, 4, 6, 8]}
    assert substitute(shards["agreement-2"]["ports"][0]) != substitute(COMPOSE["services"]["agreement"]["ports"][0])


def test_the_monitoring_profile_scrapes_the_service_with_its_secret_from_a_file():
    services = COMPOSE["services"]
    monitoring = {name for name, service in services.items() if "monitoring" in service.get("profiles", [])}
    assert monitoring == {"prometheus", "grafana"}
    # the stack itself has no profile: `up` without --profile starts it as before, and nothing of monitoring
    assert all("profiles" not in services[name] for name in ("db", "label-studio", "agreement"))
    prometheus = services["prometheus"]
    assert prometheus["image"].startswith("prom/prometheus:v")
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in prometheus["volumes"]}
    assert mounts["/etc/prometheus/prometheus.yml"] == "../deploy/prometheus/prometheus.yml"
    assert mounts["/etc/prometheus/rules/agreement.yml"] == "../deploy/prometheus/rules.yml"
    config = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    assert "/etc/prometheus/rules/*.yml" in config["rule_files"]
    (job,) = config["scrape_configs"]
    assert job["job_name"] == "agreement" and job["metrics_path"] == "/metrics"
    # it points at the service, on the port the service listens on inside the compose network
    (discovery,) = job["dns_sd_configs"]
    shards = yaml.safe_load((ROOT / "docker" / "docker-compose.shards.yml").read_text())["services"]
    assert set(discovery["names"]) == {"agreement", *(name for name in shards if name != "agreement")}
    parsed = build_parser().parse_args([substitute(part) for part in services["agreement"]["command"]])
    assert discovery["port"] == parsed.port
    # the secret: a file compose mounts where the scrape reads it; never in the config or the compose file
    credentials = job["authorization"]["credentials_file"]
    assert "credentials" not in job["authorization"] and job["authorization"]["type"] == "Bearer"
    (secret,) = prometheus["secrets"]
    assert secret["target"] == credentials
    assert set(COMPOSE["secrets"][secret["source"]]) == {"file"}
    assert re.fullmatch(r"\$\{[A-Z_]+:-\./[a-z-]+\.secret\}", COMPOSE["secrets"][secret["source"]]["file"])
    assert "*.secret" in (ROOT / "docker" / ".gitignore").read_text().split()
    assert "prometheus-data:/prometheus" in prometheus["volumes"] and "prometheus-data" in COMPOSE["volumes"]
    # no login on Prometheus: it listens on the host's loopback only, as Grafana does
    for name in monitoring:
        assert all(port.startswith("127.0.0.1:") for port in services[name]["ports"]), name
