# One image for `hearth serve` and `hearth worker` (production; see docker-compose.yml).
FROM python:3.11-slim-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends espeak-ng \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md constraints.txt ./
COPY config ./config
COPY memory ./memory
COPY server ./server
COPY workers ./workers
COPY providers ./providers
COPY bench ./bench
# the same pinned versions as `make up` / `make test` (refresh: `make lock`)
RUN pip install --no-cache-dir -c constraints.txt .
RUN useradd --system --home /var/lib/hearth hearth && mkdir -p /var/lib/hearth \
 && chown hearth /var/lib/hearth
USER hearth
ENV HEARTH_DATA_DIR=/var/lib/hearth
EXPOSE 8000 8003 8004 8005 8006
CMD ["hearth", "serve"]
