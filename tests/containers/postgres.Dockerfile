# PostgreSQL for the container tests, where no registry can give the published image: Debian's package on the
# Python base, started the way the published image starts (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB create
# the cluster on the first start; the data lives in a volume at /var/lib/postgresql/data).
FROM python:3.11-slim
# No cluster at install time: the entry point creates it in the volume on the first start. ssl-cert's snake-oil
# certificate cannot be written where the build mounts the host's /etc/ssl/certs read-only, and TLS stays off
# here (loopback), so its post-install step is skipped and the packages are configured without it.
RUN mkdir -p /etc/postgresql-common \
    && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
    && apt-get update -qq \
    && { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null 2>&1 \
         || { sed -i 's/make-ssl-cert /true /' /var/lib/dpkg/info/ssl-cert.postinst && dpkg --configure -a >/dev/null; }; } \
    && rm -rf /var/lib/apt/lists/* /var/lib/postgresql/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
USER postgres
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
CMD ["postgres"]
