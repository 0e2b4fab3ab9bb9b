# MedBanana Review: the web app and the pipeline worker, one image.
#   docker build -t medbanana-review .
#   docker compose up          (compose.yaml: PostgreSQL, migrations, app, worker)
FROM python:3.11-slim

# pg_dump / pg_restore for `medbanana backup` and `medbanana restore` against PostgreSQL.
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY pipeline ./pipeline
COPY templates ./templates
COPY static ./static
COPY prompts ./prompts
COPY migrations ./migrations
RUN pip install --no-cache-dir . && rm -rf /src

# Never root; the var folder (image cache, pipeline output) is a volume it owns.
RUN useradd --system --create-home --home-dir /var/lib/medbanana medbanana
USER medbanana
WORKDIR /var/lib/medbanana
ENV MEDBANANA_VAR_DIR=/var/lib/medbanana \
    MEDBANANA_LOG_FORMAT=json \
    PYTHONUNBUFFERED=1
VOLUME ["/var/lib/medbanana"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

CMD ["medbanana", "serve", "--host", "0.0.0.0", "--port", "8000", "--workers", "2"]
