FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY config config
COPY annotation annotation
COPY quality quality
COPY media_pipeline media_pipeline
COPY frontend frontend
COPY manage.py ./
RUN pip install --no-cache-dir .
# The containers run as nobody, so what they write must be nobody's: collectstatic's
# target (/app/var/static) and the media volume's mount point. An empty named volume
# takes the mount point's owner on first use; weights are mounted read-only.
RUN mkdir -p /app/var/static /data/media /data/weights \
    && chown -R nobody:nogroup /app/var /data/media
USER nobody
EXPOSE 8000
