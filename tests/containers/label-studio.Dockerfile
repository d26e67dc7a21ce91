# Label Studio for the container tests, where no registry can give its published image: the pip package on the
# same Python base, with what the published image has (PostgreSQL driver, data in /label-studio/data, a non-root
# user). The version is the one the Makefile tests with, passed as a build argument.
FROM python:3.11-slim
ARG LABEL_STUDIO_VERSION
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    LABEL_STUDIO_BASE_DATA_DIR=/label-studio/data HOME=/label-studio
RUN pip install "label-studio==${LABEL_STUDIO_VERSION}" \
    && useradd --uid 1001 --home-dir /label-studio --no-create-home labelstudio \
    && mkdir -p /label-studio/data && chown -R labelstudio /label-studio
USER labelstudio
WORKDIR /label-studio
EXPOSE 8080
ENTRYPOINT ["label-studio"]
CMD ["start", "--no-browser", "--internal-host", "0.0.0.0", "--port", "8080"]
